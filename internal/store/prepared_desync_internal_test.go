package store

import (
	"context"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
)

// A prepared statement cut short by its context (a deadline mid-read)
// leaves its connection out of step with the server: the next statement
// on that connection must not read the rest of the first one's answer.
func TestPreparedStatementCutShortLeavesNoStaleAnswer(t *testing.T) {
	db, err := Open(pgtest.NewURL(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := New(db)
	slow := numbered(`SELECT pg_sleep(?0)::text || 'slow' AS v`, []string{"float8"})
	fast := numbered(`SELECT ?0 AS v`, []string{"text"})
	var row struct {
		V string `bun:"v"`
	}
	if err := st.prep.scanRow(context.Background(), db, &row, slow, 0.0); err != nil || row.V != "slow" {
		t.Fatalf("warm-up: %q, %v", row.V, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err = st.prep.scanRow(ctx, db, &row, slow, 0.5)
	cancel()
	if err == nil {
		t.Fatal("a statement past its deadline succeeded")
	}
	time.Sleep(600 * time.Millisecond) // the server has answered the slow one meanwhile
	for i, want := range []string{"one", "two", "three"} {
		row.V = ""
		err := st.prep.scanRow(context.Background(), db, &row, fast, want)
		if err != nil || row.V != want {
			t.Errorf("statement %d after the cut-short one: %q, %v; want %q", i, row.V, err, want)
		}
	}
}

// A caller whose statement another caller dropped meanwhile (after a
// migration changed its result) prepares anew instead of failing, and a
// late drop of the old statement does not close its successor.
func TestPreparedStatementDroppedMeanwhile(t *testing.T) {
	db, err := Open(pgtest.NewURL(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := New(db)
	ctx := context.Background()
	q := numbered(`SELECT ?0 AS v`, []string{"text"})
	var row struct {
		V string `bun:"v"`
	}
	if err := st.prep.scanRow(ctx, db, &row, q, "a"); err != nil {
		t.Fatal(err)
	}
	old := st.prep.lookup(q)
	old.Close() // as a concurrent forget would, between our lookup and our query
	if err := st.prep.scanRow(ctx, db, &row, q, "b"); err != nil || row.V != "b" {
		t.Fatalf("after the statement was closed meanwhile: %q, %v", row.V, err)
	}
	st.prep.forget(q, old) // a caller late with the old statement
	if err := st.prep.scanRow(ctx, db, &row, q, "c"); err != nil || row.V != "c" {
		t.Fatalf("after a late forget: %q, %v", row.V, err)
	}
	if st.prep.lookup(q) == nil {
		t.Error("a late forget of the old statement dropped its successor")
	}
}
