package devtemporal

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// This file is the baseline T of the benchmarks: what a Temporal server
// gives the simplest durable work there is, a workflow that runs one
// no-op activity, started and awaited by concurrent clients. It is client
// code only (the server may be in this process or another one), shared by
// BenchmarkOneActivityWorkflow and make bench (harness/bench).

func noop(context.Context) error { return nil }

func oneActivity(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	return workflow.ExecuteActivity(ctx, noop).Get(ctx, nil)
}

// OneActivityOptions configure RunOneActivityWorkflows.
type OneActivityOptions struct {
	// TaskQueue the workflows and their worker use (default
	// "one-activity-baseline"); a queue nothing else polls.
	TaskQueue string
	// Concurrency is how many clients start a workflow and wait for its
	// result, each in a loop (default 16).
	Concurrency int
	// Count stops after this many workflows were started (0: no limit).
	Count int
	// Duration stops starting new workflows after this long (0: no limit);
	// those already started are still awaited. One of Count and Duration
	// must be set.
	Duration time.Duration
	// IDPrefix prefixes the workflow ids (default "one-activity-<unix nanos>-").
	IDPrefix string
}

// OneActivityResult is what RunOneActivityWorkflows measured.
type OneActivityResult struct {
	Completed int
	Elapsed   time.Duration // from the first start to the last completion
	// Latencies holds each workflow's time from its start call to its
	// result, sorted.
	Latencies []time.Duration
}

// PerSecond is completed workflows per second.
func (r OneActivityResult) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Completed) / r.Elapsed.Seconds()
}

// RunOneActivityWorkflows runs a worker for the one-activity workflow on
// c and has o.Concurrency clients each start one and wait for its result,
// again and again, until o.Count workflows were started or o.Duration has
// passed. The first error ends the run.
func RunOneActivityWorkflows(ctx context.Context, c client.Client, o OneActivityOptions) (OneActivityResult, error) {
	if o.TaskQueue == "" {
		o.TaskQueue = "one-activity-baseline"
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.Count <= 0 && o.Duration <= 0 {
		return OneActivityResult{}, fmt.Errorf("devtemporal: RunOneActivityWorkflows needs a Count or a Duration")
	}
	if o.IDPrefix == "" {
		o.IDPrefix = fmt.Sprintf("one-activity-%d-", time.Now().UnixNano())
	}
	w := worker.New(c, o.TaskQueue, worker.Options{})
	w.RegisterWorkflow(oneActivity)
	w.RegisterActivity(noop)
	if err := w.Start(); err != nil {
		return OneActivityResult{}, err
	}
	defer w.Stop()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	var stopAt time.Time
	if o.Duration > 0 {
		stopAt = start.Add(o.Duration)
	}
	for range o.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				if !stopAt.IsZero() && time.Now().After(stopAt) {
					return
				}
				i := next.Add(1)
				if o.Count > 0 && i > int64(o.Count) {
					return
				}
				t0 := time.Now()
				run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
					ID: fmt.Sprintf("%s%d", o.IDPrefix, i), TaskQueue: o.TaskQueue,
				}, oneActivity)
				if err == nil {
					err = run.Get(ctx, nil)
				}
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					cancel()
				} else {
					lat = append(lat, time.Since(t0))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res := OneActivityResult{Completed: len(lat), Elapsed: time.Since(start), Latencies: lat}
	sort.Slice(res.Latencies, func(i, j int) bool { return res.Latencies[i] < res.Latencies[j] })
	return res, firstErr
}
