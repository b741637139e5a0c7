package app

import (
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// temporalBuckets (seconds) reach past a delivery attempt's 20 s and the
// alerts' thresholds.
var temporalBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// temporalMetrics bridges the Temporal SDK's metrics (temporal_*, labelled by
// namespace, task queue and type, never by payload or id) into reg through a
// tally scope with Prometheus naming. The SDK reports a few series under one
// name with two label sets; the second is logged once and dropped rather than
// panic. The closer flushes the scope; close it after the client.
func temporalMetrics(reg prometheus.Registerer, log *slog.Logger) (client.MetricsHandler, io.Closer) {
	var warned sync.Map
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              reg,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: temporalBuckets,
		OnRegisterError: func(err error) {
			if _, dup := warned.LoadOrStore(err.Error(), true); !dup {
				log.Warn("temporal sdk metric not exported: registered twice with different labels", slog.Any("error", err))
			}
		},
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
		// tally's own cardinality series are not valid Prometheus names.
		OmitCardinalityMetrics: true,
	}, time.Second)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), closer
}
