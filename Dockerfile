# syntax=docker/dockerfile:1
#
# One image for the three production binaries; each compose service picks
# its command: `api`, `worker`, or `admin <command>`.
#
#   docker build -t workspace-service .

# The toolchain must be at least the go directive of go.mod (GOTOOLCHAIN=local
# forbids downloading another one).
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath
COPY . .
# Only the modules these three binaries import are downloaded (not the
# embedded Temporal server that harness/cmd/dev links); the cache mounts keep them,
# and the build cache, across builds.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -ldflags="-s -w" -o /out/ ./cmd/api ./cmd/worker ./cmd/admin

# Alpine rather than distroless: its busybox wget lets compose healthchecks
# call /readyz. The binaries are static and need only CA certificates (for
# HTTPS webhook deliveries) and time zone data.
FROM alpine:3.22
RUN apk add --no-cache ca-certificates tzdata \
    && addgroup -S -g 10001 app \
    && adduser -S -D -H -u 10001 -G app app
COPY --from=build /out/ /usr/local/bin/
# A numeric user, so orchestrators can verify it is not root.
USER 10001:10001
# API (HTTP_ADDR) and worker metrics/health (WORKER_HTTP_ADDR).
EXPOSE 8080 9090
CMD ["api"]
