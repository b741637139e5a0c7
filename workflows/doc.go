// Package workflows holds the service's Temporal workflows. Workflow code is
// deterministic: time comes from workflow.Now, waiting from workflow.Sleep
// or timers, concurrency from workflow.Go, and all I/O happens in activities.
// Workflow IDs derive from business keys, so a repeated start is harmless
// and an operator can find a workflow in the Web UI by what it is about.
package workflows
