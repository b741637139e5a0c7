package bench

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// scenario12 is what tracing costs: 3a's load (10 events/s to one
// subscription) with tracing off, then with every process exporting every
// span (OTEL_TRACES_SAMPLER=always_on) to an OTLP/gRPC endpoint in this
// harness, which counts them. Both halves run here, back to back, so they
// compare on the same machine state, each on processes restarted for it
// (so 12b's start-up is not counted against it alone).
func (h *harness) scenario12(ctx context.Context) error {
	if err := h.restartService(ctx, nil); err != nil {
		return err
	}
	off, err := h.paced(ctx, "12a", 1, false, 10)
	if err != nil {
		return err
	}
	h.add(row{id: "12a", name: "tracing off: paced 10 events/s, 1 subscription (3a's load)",
		throughput: fmt.Sprintf("10.0 deliveries/s offered (%d delivered)", off.delivered),
		lat:        &off.lat, use: &off.use, deliveries: off.delivered,
		vs: fmt.Sprintf("%.1f CPU ms/event (whole service)", off.cpuPerEv)})

	sink, err := startSpanSink()
	if err != nil {
		return err
	}
	defer sink.stop()
	on := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + sink.addr, "OTEL_TRACES_SAMPLER=always_on"}
	// Back to tracing off whatever happens, so the scenarios after this
	// one never run (or restart workers) with tracing on.
	defer func() {
		if err := h.restartService(ctx, nil); err != nil {
			h.notef("12: the processes did not restart with tracing off: %v", err)
		}
	}()
	if err := h.restartService(ctx, on); err != nil {
		return err
	}
	r, err := h.paced(ctx, "12b", 1, false, 10)
	if err != nil {
		return err
	}
	// The batch exporter sends within 5 s (OTEL_BSP_SCHEDULE_DELAY).
	time.Sleep(6 * time.Second)
	spans := sink.count.Load()
	row := row{id: "12b", name: "tracing on, 100% sampled, OTLP/gRPC to a local endpoint: paced 10 events/s, 1 subscription",
		throughput: fmt.Sprintf("10.0 deliveries/s offered (%d delivered; %d spans exported, %.1f per event)",
			r.delivered, spans, float64(spans)/float64(max(r.events, 1))),
		lat: &r.lat, use: &r.use, deliveries: r.delivered}
	if off.cpuPerEv > 0 {
		row.vs = fmt.Sprintf("%.1f CPU ms/event (whole service), %+.0f%% vs 12a; p99 %s vs %s",
			r.cpuPerEv, (r.cpuPerEv/off.cpuPerEv-1)*100, ms(r.lat.p99), ms(off.lat.p99))
	}
	if spans == 0 {
		h.notef("12b: no span reached the endpoint: tracing did not turn on")
	}
	h.add(row)
	return nil
}

// restartService restarts every api and worker process with the stack's
// environment plus extra (nil: the stack's alone).
func (h *harness) restartService(ctx context.Context, extra []string) error {
	t0 := time.Now()
	for _, group := range [][]*procstack.Proc{h.st.APIs, h.st.Workers} {
		for _, p := range group {
			if h.baseEnv == nil {
				h.baseEnv = map[*procstack.Proc][]string{}
			}
			if _, ok := h.baseEnv[p]; !ok {
				h.baseEnv[p] = slices.Clone(p.Env)
			}
			if _, err := p.Terminate(40 * time.Second); err != nil {
				return err
			}
			p.Env = append(slices.Clone(h.baseEnv[p]), extra...) // exec keeps the last of duplicate keys
			if err := p.Start(ctx, time.Minute); err != nil {
				return err
			}
		}
	}
	h.logf("   api and worker restarted with %v in %v", extra, time.Since(t0).Round(100*time.Millisecond))
	return nil
}

// spanSink is an OTLP/gRPC trace endpoint that counts the spans it gets.
type spanSink struct {
	collectortrace.UnimplementedTraceServiceServer
	addr  string
	srv   *grpc.Server
	count atomic.Int64
}

func startSpanSink() (*spanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &spanSink{addr: ln.Addr().String(), srv: grpc.NewServer()}
	collectortrace.RegisterTraceServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *spanSink) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			s.count.Add(int64(len(ss.Spans)))
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (s *spanSink) stop() { s.srv.Stop() }
