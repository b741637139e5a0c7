// Package stack is the end-to-end test of the production topology (make
// stack-test): it builds and runs harness/cmd/stack, the command behind make
// stack, first interrupting one run with SIGINT while Temporal's server
// starts (it must exit at once, leaving nothing running), then as an
// operator would (two PostgreSQL clusters, Temporal's own
// server, two api and two worker processes, Prometheus, Jaeger), drives it
// through both APIs with webhooks delivered to a real HTTPS receiver that
// verifies every signature (harness/receiver), finds an event's trace in
// Jaeger by its id (the api's publish span and the workers' attempts in
// one trace), kills a worker, lists workflows by
// their search attributes, reads Prometheus's targets, compares each
// process's environment with docker-compose.yml's, and stops it with
// SIGINT, checking that no process outlives it. It has no code of its own.
package stack
