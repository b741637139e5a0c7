package store

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/models"
)

// A database that cannot be reached reads as unavailable (503 at the API),
// not as an internal error.
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	db, err := Open("postgres://postgres@"+addr+"/none?sslmode=disable", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = New(db).CredentialByHash(context.Background(), make([]byte, 32))
	if !errors.Is(err, models.ErrUnavailable) {
		t.Fatalf("err = %v, want models.ErrUnavailable", err)
	}
	_, err = New(db).Projects("").List(context.Background(), models.ProjectFilter{
		WorkspaceID: uuid.New(), Page: models.PageRequest{Page: 1, PerPage: 1},
	})
	if !errors.Is(err, models.ErrUnavailable) {
		t.Fatalf("list: err = %v, want models.ErrUnavailable", err)
	}
}

func TestBadQueryIsNotUnavailable(t *testing.T) {
	db := pgtest.NewDB(t)
	_, err := db.NewRaw("SELECT no_such_column FROM projects").Exec(context.Background())
	if err = translate(err, nil); errors.Is(err, models.ErrUnavailable) || err == nil {
		t.Fatalf("err = %v, want a plain internal error", err)
	}
}
