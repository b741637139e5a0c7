package store_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// TestAPIKeyConcurrentRotations rotates one key from many goroutines at once
// and checks that they were serialized: a trigger records every update of
// the row as PostgreSQL applied it, and each rotation must have moved the
// secret that was current at that moment (not one it read before another
// rotation committed) into the previous slot. Afterwards the newest secret
// and exactly one previous secret open the key, and no issued secret is lost.
func TestAPIKeyConcurrentRotations(t *testing.T) {
	const rotations = 10
	f := newKeyFixture(t)
	ctx := context.Background()
	db := f.st.DB()
	mustExec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(`CREATE TABLE key_updates (n serial, old_hash bytea, new_hash bytea, new_previous bytea)`)
	mustExec(`CREATE FUNCTION log_key_update() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO key_updates (old_hash, new_hash, new_previous)
			VALUES (OLD.secret_hash, NEW.secret_hash, NEW.previous_secret_hash);
			RETURN NEW;
		END $$`)
	mustExec(`CREATE TRIGGER log_key_update AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION log_key_update()`)

	now := time.Now()
	k := f.create(t, f.member, nil, now)
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		mu      sync.Mutex
		secrets = map[string]string{} // hash -> secret, of every issued secret
	)
	secrets[string(secret.HashAPIKey(k.Secret))] = k.Secret
	for i := 0; i < rotations; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{Grace: time.Hour, Now: now})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			secrets[string(secret.HashAPIKey(r.Secret))] = r.Secret
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}

	var log []struct {
		OldHash, NewHash, NewPrevious []byte
	}
	if err := db.NewRaw(`SELECT old_hash, new_hash, new_previous FROM key_updates ORDER BY n`).Scan(ctx, &log); err != nil {
		t.Fatal(err)
	}
	if len(log) != rotations {
		t.Fatalf("%d updates recorded, want %d", len(log), rotations)
	}
	seen := map[string]bool{}
	for i, u := range log {
		if !bytes.Equal(u.NewPrevious, u.OldHash) {
			t.Fatalf("update %d kept as previous a secret that was not current when it ran: a lost update", i+1)
		}
		if i > 0 && !bytes.Equal(u.OldHash, log[i-1].NewHash) {
			t.Fatalf("update %d did not start from the secret update %d issued", i+1, i)
		}
		seen[string(u.NewHash)] = true
	}
	if len(seen) != rotations {
		t.Fatalf("%d distinct secrets issued by %d rotations", len(seen), rotations)
	}

	var open []string
	for _, s := range secrets {
		if f.opens(t, s, now) {
			open = append(open, s)
		}
	}
	st := f.stored(t, k.ID)
	last := log[len(log)-1]
	if len(open) != 2 || !bytes.Equal(st.SecretHash, last.NewHash) || !bytes.Equal(st.PreviousSecretHash, last.OldHash) {
		t.Fatalf("%d of %d secrets open the key, want exactly the newest and its predecessor", len(open), len(secrets))
	}
}

// A rotation by a key of itself re-checks, under the row lock, that the
// secret presented is still the current one: a request authenticated just
// before another rotation committed is refused (the hostile test won this
// race 3 times in 5, leaving the attacker with the only working secret).
func TestAPIKeySelfRotationWithAStaleSecret(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	now := time.Now()
	k := f.create(t, f.member, nil, now)
	cred, err := f.st.CredentialByHash(ctx, secret.HashAPIKey(k.Secret))
	if err != nil {
		t.Fatal(err)
	}
	stale, ok := cred.Authenticate(secret.HashAPIKey(k.Secret), now)
	if !ok || stale.PreviousSecret {
		t.Fatalf("the current secret did not authenticate as current: %v %+v", ok, stale)
	}
	// The owner rotates first; the stale request then reaches the lock.
	owner, err := f.keys.Rotate(ctx, stale, k.ID, models.APIKeyRotation{Grace: time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.keys.Rotate(ctx, stale, k.ID, models.APIKeyRotation{Now: now})
	if !errors.Is(err, models.ErrForbidden) {
		t.Fatalf("a rotation with the now previous secret: %v, want previous_secret_not_allowed", err)
	}
	cred, err = f.st.CredentialByHash(ctx, secret.HashAPIKey(owner.Secret))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cred.Authenticate(secret.HashAPIKey(owner.Secret), now); !ok {
		t.Fatal("the owner's new secret no longer opens the key")
	}
}
