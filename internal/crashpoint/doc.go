// Package crashpoint lets the end-to-end tests SIGKILL a process at a named
// point of its code. Only a build with the crashpoints tag does anything
// (crashpoint_on.go reads WORKSPACE_CRASHPOINT); every other build,
// production's included, compiles Hit to nothing.
package crashpoint
