# Everything a fresh machine needs is installed by these targets: the
# PostgreSQL server binaries, Prometheus, docker-compose and Chromium from
# Debian when missing, and the linters from the Go module proxy into ./bin.

SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
STATICCHECK_VERSION := v0.8.2
WORKFLOWCHECK_VERSION := v0.6.0
# Packages whose code and tests do not embed the Temporal server: quick to
# build with -race (the server itself would take minutes more).
RACE_PKGS = $(shell $(GO) list -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | grep -Ev 'harness/(testenv|devtemporal)' | cut -d' ' -f1)

.PHONY: dev test race lint bench bench-short bench-go tools postgres prometheus alerts build clean help reliability reliability-short fuzz-short stack stack-test compose chromium

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

dev: postgres ## run the whole service locally (embedded Temporal, local PostgreSQL, API, worker)
	@echo "building harness/cmd/dev (the first build compiles the Temporal server: a few minutes)..."
	$(GO) build -o $(BIN)/dev ./harness/cmd/dev
	$(BIN)/dev $(ARGS)

# The metrics test (harness/e2e/metrics) runs the api, worker, admin and
# devtemporal binaries; E2E_BIN keeps them, so later runs relink only what
# changed.
# SERIAL_TESTS need the machine to themselves (timing premises that the
# other packages' tests, run beside them by go test ./..., can break): they
# skip themselves unless E2E_SERIAL is set, and run alone afterwards.
SERIAL_TESTS = TestSlowReceiversHoldOnlyTheirWorkspacesShare
test: postgres prometheus compose chromium ## run the full test suite
	E2E_BIN=$(BIN)/e2e $(GO) test -count=1 -timeout 15m ./...
	E2E_SERIAL=1 E2E_BIN=$(BIN)/e2e $(GO) test -count=1 -timeout 5m -run '^($(SERIAL_TESTS))$$' ./harness/e2e/webhooks

race: postgres prometheus compose ## run the unit and store tests with the race detector
	E2E_BIN=$(BIN)/e2e $(GO) test -count=1 -race -timeout 15m $(RACE_PKGS)

lint: tools ## go vet, staticcheck and Temporal's workflowcheck
	$(GO) vet ./...
	$(BIN)/staticcheck ./...
	$(BIN)/workflowcheck ./...

# The benchmark (harness/cmd/bench, harness/bench): builds the api, worker,
# admin, devtemporal and Temporal server binaries into bin/bench (kept, so
# later runs relink only what changed), then for each topology, make dev's
# (devtemporal on SQLite) and make stack's (Temporal's own server on
# PostgreSQL, production's), starts them as separate processes with
# throwaway PostgreSQL clusters, runs every scenario for a bounded time
# against baselines measured in the same run, and prints one markdown table
# per topology, both also written to bin/bench-table.md. BENCH_ARGS passes
# flags, e.g. BENCH_ARGS="--only 6,7", BENCH_ARGS="--stack --apis 4
# --workers 8" (the stack only, with that many processes), BENCH_ARGS="--stack
# --only 1,2 --profile bin/profiles" (CPU profiles and pg_stat_statements).
BENCH_RUN = $(GO) build -o $(BIN)/bench-cmd ./harness/cmd/bench && $(BIN)/bench-cmd --bin $(BIN)/bench $(BENCH_ARGS)

bench: postgres ## the benchmark tables of both topologies (~25 min): delivery, publishing, pagination, cost per delivery vs baselines; bin/bench-table.md
	@mkdir -p $(BIN)
	$(BENCH_RUN) --out $(BIN)/bench-table.md

bench-short: postgres ## the benchmark table at CI's scale, make dev's topology (~4 min); bin/bench-short-table.md
	@mkdir -p $(BIN)
	$(BENCH_RUN) --short --out $(BIN)/bench-short-table.md

bench-go: postgres ## the Go micro-benchmarks of the API and the store
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./api/... ./internal/store/...

# The fault suite (harness/reliability) builds the api, worker, admin and
# devtemporal binaries into bin/reliability (kept, so later runs relink only
# what changed), runs them as real processes and kills them. It is skipped
# by `make test`; CI runs the short scale.
RELIABILITY_TEST = $(GO) test -count=1 -v -run '^TestReliability$$' ./harness/reliability

reliability: postgres ## fault suite at full scale: processes killed and restarted (~5 min once built); table in bin/reliability-summary.txt
	@mkdir -p $(BIN)
	RELIABILITY=full RELIABILITY_BIN=$(BIN)/reliability RELIABILITY_SUMMARY=$(BIN)/reliability-summary.txt \
		$(RELIABILITY_TEST) -timeout 60m

reliability-short: postgres ## fault suite at CI scale (under 5 minutes once built)
	@mkdir -p $(BIN)
	RELIABILITY=short RELIABILITY_BIN=$(BIN)/reliability RELIABILITY_SUMMARY=$(BIN)/reliability-summary.txt \
		$(RELIABILITY_TEST) -timeout 20m

# Native Go fuzz targets over every request-body decoder, the query
# parser, the Authorization parser and every endpoint through the router;
# seeds in api/testdata/fuzz. `make test` replays the seeds; this fuzzes
# each target for FUZZTIME (one target per go test run, as Go requires).
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# report its own deadline as a failure ("context deadline exceeded", no
# input written; golang/go#75804, fixed in Go 1.27; seen in CI on
# FuzzRequests). 5000 runs is 2-10 s per target here.
FUZZ_TARGETS = FuzzDecodeObject FuzzBearerToken FuzzQueryParams FuzzRequests
FUZZTIME ?= 5000x

fuzz-short: postgres ## fuzz every target for FUZZTIME (5000 runs each; CI)
	@for t in $(FUZZ_TARGETS); do \
		echo "== fuzz $$t for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./api/ || exit 1; \
	done

build: ## build the api, worker and admin binaries into ./bin
	$(GO) build -o $(BIN)/ ./cmd/...

tools: $(BIN)/staticcheck $(BIN)/workflowcheck

$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(BIN)/workflowcheck:
	GOBIN=$(BIN) $(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)

# initdb refuses to run as root; the project runs the server binaries as
# the postgres user, which the Debian package creates.
postgres:
	@if ! ls "$$(pg_config --bindir 2>/dev/null)/initdb" /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "installing PostgreSQL server binaries (postgresql-15)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql-15 >/dev/null; \
	fi

# The production topology of docker-compose.yml without containers
# (harness/cmd/stack): two PostgreSQL clusters, Temporal's own server and SQL tool
# built from the module proxy at go.mod's version, two api and two worker
# processes, the Web UI, Prometheus and Jaeger (built from the module proxy
# at harness/tools/jaeger/go.mod's version; the processes' traces go to it).
# The binaries go to bin/stack and are reused (the first build compiles the
# Temporal server and the OpenTelemetry collector: minutes). STACK_ARGS
# passes flags, e.g. STACK_ARGS="--workers 3 --ui-port 8233",
# STACK_ARGS="--jaeger-ui DIR" (a jaeger-ui build: see docs/operations.md#tracing).
stack: postgres prometheus ## run the production topology (2 APIs, 2 workers, Temporal server, Prometheus, Jaeger) until Ctrl-C
	$(GO) build -o $(BIN)/stack/stack ./harness/cmd/stack
	$(BIN)/stack/stack --bin $(BIN)/stack $(STACK_ARGS)

stack-test: postgres prometheus compose ## end-to-end test of make stack's topology (~1 min once built)
	STACK_TEST=1 STACK_BIN=$(BIN)/stack $(GO) test -count=1 -v -timeout 20m -run '^TestProductionTopology$$' ./harness/e2e/stack

# docker-compose.yml is validated by Debian's docker-compose (1.29, no
# engine needed for `config`), whose resolved environments a test compares
# with make stack's.
compose:
	@if ! command -v docker-compose >/dev/null; then \
		echo "installing docker-compose (Debian's package)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq docker-compose >/dev/null; \
	fi

# Debian's prometheus package brings prometheus and promtool: the metrics
# test scrapes the real api and worker with it, and the alerting rules are
# checked and unit-tested with promtool. Installing it starts no service
# where no init system runs; where one does, stop it if port 9090 matters.
prometheus:
	@if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then \
		echo "installing Prometheus (Debian's prometheus package)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq prometheus >/dev/null; \
	fi

# Debian's chromium: the consumer portal's browser test
# (harness/e2e/portal) drives it headless over the DevTools protocol.
chromium:
	@if ! command -v chromium >/dev/null; then \
		echo "installing Chromium (Debian's chromium package)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi

alerts: prometheus ## check the Prometheus config and alerting rules, and run the rules' unit tests (promtool)
	cd deploy/prometheus && promtool check config prometheus.yml && promtool check rules alerts.yml && promtool test rules alerts_test.yml

clean: ## remove binaries and local dev data
	rm -rf $(BIN) .data
