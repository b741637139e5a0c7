// Package outbox tells Temporal about committed changes: the one way the
// service does so. Each change is recorded in PostgreSQL by its own
// transaction (an event row whose dispatched_at is NULL, an API key or a
// webhook subscription whose lifecycle_seq is ahead of its
// lifecycle_synced_seq), so nothing committed is ever without its record,
// and Temporal is never on a request's path. The API then pokes the
// workers (store.Notifier); each worker runs one Relay per outbox, woken by
// the notification (Listen) and sweeping every SweepInterval for anything
// a notification missed. A relay claims a batch with a lease (replicas
// take disjoint rows), makes each Temporal call, marks what Temporal took
// and gives the rest back. Telling twice is harmless: workflow IDs derive
// from business keys, a start finds the run already going, and a signal
// only makes a workflow re-read the database.
package outbox
