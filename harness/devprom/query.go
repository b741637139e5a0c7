package devprom

import (
	"context"
	"fmt"
	"sort"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string // __name__ included when the result has it
	Value  float64
}

// Query evaluates an instant PromQL query now and returns its series. A
// scalar answer is one Sample without labels.
func (p *Prometheus) Query(ctx context.Context, promql string) ([]Sample, error) {
	v, _, _, err := p.api.Query(ctx, promql, time.Now())
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", promql, err)
	}
	switch v := v.(type) {
	case model.Vector:
		out := make([]Sample, len(v))
		for i, s := range v {
			out[i] = Sample{Labels: labels(s.Metric), Value: float64(s.Value)}
		}
		return out, nil
	case *model.Scalar:
		return []Sample{{Labels: map[string]string{}, Value: float64(v.Value)}}, nil
	default:
		return nil, fmt.Errorf("query %q: a %s answer; want an instant vector or a scalar", promql, v.Type())
	}
}

// WaitQuery repeats Query until it returns at least one series or timeout
// passes; then it returns the last answer and an error saying so.
func (p *Prometheus) WaitQuery(ctx context.Context, promql string, timeout time.Duration) ([]Sample, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, err := p.Query(ctx, promql)
		if err == nil && len(got) > 0 {
			return got, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("query %q: no series within %v", promql, timeout)
			}
			return got, err
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Target is one scrape target as Prometheus sees it.
type Target struct {
	Job       string
	Instance  string // host:port
	ScrapeURL string
	Health    string // "up", "down" or "unknown"
	LastError string
}

// Targets lists the active scrape targets, by job then instance.
func (p *Prometheus) Targets(ctx context.Context) ([]Target, error) {
	res, err := p.api.Targets(ctx)
	if err != nil {
		return nil, fmt.Errorf("targets: %w", err)
	}
	out := make([]Target, 0, len(res.Active))
	for _, t := range res.Active {
		out = append(out, Target{
			Job:       string(t.Labels["job"]),
			Instance:  string(t.Labels["instance"]),
			ScrapeURL: t.ScrapeURL,
			Health:    string(t.Health),
			LastError: t.LastError,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Job != out[j].Job {
			return out[i].Job < out[j].Job
		}
		return out[i].Instance < out[j].Instance
	})
	return out, nil
}

// MetricNames lists the names of every series Prometheus holds (the
// __name__ label's values).
func (p *Prometheus) MetricNames(ctx context.Context) ([]string, error) {
	vals, _, _, err := p.api.LabelValues(ctx, model.MetricNameLabel, nil, time.Time{}, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("metric names: %w", err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out, nil
}

// Rules lists the alerting and recording rules Prometheus loaded, by
// name, with each one's health ("ok", "err", "unknown").
func (p *Prometheus) Rules(ctx context.Context) (map[string]string, error) {
	res, err := p.api.Rules(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	out := map[string]string{}
	for _, g := range res.Groups {
		for _, r := range g.Rules {
			switch r := r.(type) {
			case promv1.AlertingRule:
				out[r.Name] = string(r.Health)
			case promv1.RecordingRule:
				out[r.Name] = string(r.Health)
			}
		}
	}
	return out, nil
}

func labels(m model.Metric) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = string(v)
	}
	return out
}
