package api

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

func TestPageBudgetReserveTrimRelease(t *testing.T) {
	b := newPageBudget(1000, time.Minute)
	ctx := context.Background()
	r, err := b.reserve(ctx, 800)
	if err != nil {
		t.Fatal(err)
	}
	if b.sem.TryAcquire(201) {
		t.Fatal("201 bytes free while 800 of 1000 are reserved")
	}
	r.trim(300) // the page turned out to hold 300
	if !b.sem.TryAcquire(700) {
		t.Fatal("trim to 300 did not give back 500")
	}
	b.sem.Release(700)
	r.trim(900) // never grows
	if !b.sem.TryAcquire(700) {
		t.Fatal("trim above what is held took more")
	}
	b.sem.Release(700)
	r.release()
	r.release() // twice is harmless
	if !b.sem.TryAcquire(1000) {
		t.Fatal("release did not give everything back")
	}
	b.sem.Release(1000)

	// More than the whole budget is capped: a page always fits an idle
	// budget instead of waiting for room that can never be.
	big, err := b.reserve(ctx, 5000)
	if err != nil {
		t.Fatal(err)
	}
	if big.held != 1000 {
		t.Fatalf("held %d, want the whole budget 1000", big.held)
	}
	big.release()
}

func TestPageBudgetSecondReservationWaits(t *testing.T) {
	b := newPageBudget(1000, time.Minute)
	ctx := context.Background()
	first, err := b.reserve(ctx, 700)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := b.reserve(ctx, 700)
		if err == nil {
			defer r.release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second reservation did not wait (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	first.trim(300) // 300 + 700 fit
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second reservation still waiting after the first was trimmed")
	}
	first.release()
}

func TestPageBudgetTimeout(t *testing.T) {
	b := newPageBudget(1000, 50*time.Millisecond)
	hold, err := b.reserve(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.release()
	start := time.Now()
	_, err = b.reserve(context.Background(), 1)
	var me *models.Error
	if !errors.As(err, &me) || me.Code != "unavailable" || !errors.Is(err, models.ErrUnavailable) {
		t.Fatalf("err %v, want 503 unavailable", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before its 50ms wait", d)
	}
	// A caller that leaves stops waiting at once, well before the wait.
	slow := newPageBudget(1, time.Minute)
	if !slow.sem.TryAcquire(1) {
		t.Fatal("a fresh budget is not free")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if _, err := slow.reserve(ctx, 1); !errors.Is(err, models.ErrUnavailable) || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v, want 503 unavailable at once", err, time.Since(start))
	}
}

func TestEventPageCost(t *testing.T) {
	items := []models.EventDetail{{Data: json.RawMessage(`{"a":1}`)}, {Data: make(json.RawMessage, 1000)}}
	if got, want := eventPageCost(items), int64(2*7+eventItemOverhead+2*1000+eventItemOverhead); got != want {
		t.Fatalf("cost %d, want %d", got, want)
	}
	// The largest data as read is within the worst case of one item.
	if eventPageCost([]models.EventDetail{{Data: make(json.RawMessage, eventDataReadMax)}}) != eventPageWorstCost(1) {
		t.Fatal("worst cost is not the cost of the largest item")
	}
	// The default budget takes a worst page of the largest perPage.
	if w := eventPageWorstCost(maxPerPage); w > eventPageBudgetBytes {
		t.Fatalf("worst page %d over the budget %d", w, eventPageBudgetBytes)
	}
}
