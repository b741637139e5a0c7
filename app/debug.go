package app

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveDebug serves net/http/pprof on addr (DEBUG_ADDR) until ctx ends,
// on a listener and mux of its own, so profiles are never reachable
// through the API's or the metrics' port. A failure is logged, never
// fatal: profiling is optional.
func serveDebug(ctx context.Context, addr string, log *slog.Logger) {
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("debug listener not started", "addr", addr, "error", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("serving pprof", "addr", ln.Addr().String())
	go func() { _ = Serve(ctx, ln, mux, time.Second) }()
}
