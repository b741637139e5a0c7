// Package metrics holds the end-to-end test of what operators scrape: the
// real api and worker binaries (harness/procstack) with a real Temporal
// server and PostgreSQL, scraped by a real Prometheus (harness/devprom)
// on the deployment's own configuration with loopback targets, after some
// traffic. It has no code of its own.
package metrics
