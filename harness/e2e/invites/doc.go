// Package invites holds the end-to-end tests of the workspace and its
// invites: the real API and worker processes on PostgreSQL and an embedded
// Temporal server, driven over HTTP (see harness/testenv). It has no code
// of its own.
package invites
