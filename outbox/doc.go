// Package outbox tells Temporal about committed changes, the one way the
// service does so: each change is recorded by its own transaction, so Temporal
// is never on a request's path, and one Relay per outbox tells Temporal later.
// Telling twice is harmless, as workflow IDs derive from business keys.
package outbox
