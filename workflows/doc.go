// Package workflows holds the service's Temporal workflows and, in the
// *_start.go files, what the API and the outbox relays call to start and
// signal them, under IDs derived from business keys.
package workflows
