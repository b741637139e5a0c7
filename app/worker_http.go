package app

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// instrumentWorkerHTTP counts the worker's HTTP requests, so a failing
// readiness probe shows in Prometheus as well as in the orchestrator.
func instrumentWorkerHTTP(reg prometheus.Registerer, mux *http.ServeMux) http.Handler {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "worker_http_requests_total",
		Help: "Requests to the worker's HTTP listener by method, route pattern and status code.",
	}, []string{"method", "route", "code"})
	reg.MustRegister(requests)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		mux.ServeHTTP(rec, r)
		// The mux sets the matched pattern ("GET /readyz") on r; an
		// unknown path matches none, and its raw path is never a label.
		route := "unmatched"
		if _, path, ok := strings.Cut(r.Pattern, " "); ok {
			route = path
		}
		method := r.Method
		if method != http.MethodGet && method != http.MethodHead {
			method = "other"
		}
		requests.WithLabelValues(method, route, strconv.Itoa(rec.status)).Inc()
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
