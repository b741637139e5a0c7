// Package idempotency holds the end-to-end tests of Idempotency-Key
// handling across crashes: the real api process, built with the
// crashpoints tag (internal/crashpoint), SIGKILLs itself at a chosen point
// of a request, and a retry to the restarted process must get its answer
// at once. It has no code of its own.
package idempotency
