// Package apikeys holds the end-to-end tests of API keys: the real API and
// worker processes, an embedded Temporal server and PostgreSQL, driven over
// HTTP (see harness/testenv). It has no code of its own.
package apikeys
