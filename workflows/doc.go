// Package workflows holds the service's Temporal workflows. Workflow code is
// deterministic: time comes from workflow.Now, waiting from workflow.Sleep
// or timers, concurrency from workflow.Go, and all I/O happens in activities.
// Workflow IDs derive from business keys, so a repeated start is harmless.
// The delivery and API key workflows carry search attributes (named in
// internal/searchattr), so an operator finds them in the Web UI by what
// they are about, and keep their IDs, start options, signals and memos in
// delivery_start.go and apikey_start.go: code that runs in the caller (the
// API, the worker's outbox relays), not in a workflow.
package workflows
