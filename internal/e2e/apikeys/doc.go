// Package e2e holds end-to-end tests: the real API and worker processes,
// an embedded Temporal server and PostgreSQL, driven over HTTP (see
// internal/testenv). It has no code of its own.
package e2e
