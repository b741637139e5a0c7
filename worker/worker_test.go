package worker_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/worker"
)

// A worker started while Temporal is unreachable keeps trying instead of
// failing (which used to stop the whole worker process, sweeper included),
// and still stops promptly when asked.
func TestRunWaitsForTemporal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now
	c, err := client.NewLazyClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- worker.Run(ctx, c, worker.Options{TaskQueue: "q", StopTimeout: time.Second}, &activities.Activities{})
	}()
	select {
	case err := <-done:
		t.Fatalf("Run returned while Temporal was unreachable: %v", err)
	case <-time.After(4 * time.Second):
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop after cancel")
	}
}
