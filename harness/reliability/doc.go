// Package reliability is the fault suite: it builds the real api, worker,
// admin and devtemporal binaries, runs them as separate processes against
// a PostgreSQL cluster of its own, and kills, stops and restarts them (and
// PostgreSQL and Temporal) while events are being delivered to HTTPS
// receivers in the test process. After each scenario a checker compares
// what the receivers got with the delivery records in the database and
// prints one line: accepted / delivered / lost / duplicate receipts /
// record anomalies.
//
// The package holds only tests. They are skipped unless RELIABILITY is set:
//
//	make reliability         # RELIABILITY=full: the full scale
//	make reliability-short   # RELIABILITY=short: CI's scale, under 5 minutes
//
// Other variables: RELIABILITY_BIN (where the binaries are built and
// reused; default a temporary folder), RELIABILITY_PREBUILT=1 (run the
// binaries already in RELIABILITY_BIN, e.g. built from a clean checkout
// while the working tree is mid-edit), RELIABILITY_SUMMARY (a file that
// receives the summary table), RELIABILITY_RUN (a regular expression of
// scenario names, e.g. "a-|c-"), RELIABILITY_KEEP=1 (keep the logs and
// data of a passing run). The processes' logs are written under the run
// folder, whose path is printed when a scenario fails.
package reliability
