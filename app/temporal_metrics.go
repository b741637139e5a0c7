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

// temporalBuckets are the bounds, in seconds, of the SDK's latency
// histograms (schedule-to-start, execution, requests): from a millisecond
// to a minute, past a delivery attempt's 20 s and the alerts' thresholds.
var temporalBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// temporalMetrics bridges the Temporal SDK's metrics into reg, the
// process's own registry, the way Temporal's reference applications do: a
// tally scope reporting to Prometheus, with the SDK's Prometheus naming
// (counters end in _total, latencies in _seconds and are histograms). The
// series are named temporal_* and labelled by namespace, task_queue,
// workflow_type, activity_type, operation and the like; none carries a
// payload, an id or a secret.
//
// The SDK reports a few series under one name with different label sets
// (temporalio/sdk-go#1450); Prometheus refuses the second registration.
// The reporter would panic; here it logs once per name and drops that
// series, so a metric can never take a process down.
//
// The closer flushes the scope; close it after the client.
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
