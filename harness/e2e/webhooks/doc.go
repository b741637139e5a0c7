// Package webhooks holds the end-to-end tests and benchmarks of webhook
// delivery: the real API and worker processes (testenv) against an
// embedded Temporal server, PostgreSQL and real HTTPS receivers
// (httptest.NewTLSServer) that verify signatures with the Standard
// Webhooks reference library. It has no code of its own.
package webhooks
