package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// pgProfileSettings load pg_stat_statements into the service's PostgreSQL
// when Config.Profile is set.
var pgProfileSettings = []string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all"}

// profiler records, over one scenario's window, a CPU profile of every
// api and worker process and the service's PostgreSQL statements, into
// Config.Profile (nil: profiling is off).
type profiler struct {
	h    *harness
	name string // file prefix: <topology>-<scenario>
	wg   sync.WaitGroup
}

// startProfile resets the statement counters and starts a CPU profile of
// each process for d; nil when profiling is off.
func (h *harness) startProfile(ctx context.Context, id string, d time.Duration) *profiler {
	if h.cfg.Profile == "" {
		return nil
	}
	p := &profiler{h: h, name: h.topo + "-" + id}
	if _, err := h.st.DB.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()"); err != nil {
		h.notef("%s: pg_stat_statements: %v", id, err)
	}
	for _, proc := range append(append([]*procstack.Proc{}, h.st.APIs...), h.st.Workers...) {
		if proc.DebugAddr == "" {
			continue
		}
		p.wg.Go(func() {
			url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", proc.DebugAddr, int(d.Seconds()+0.5))
			if err := download(ctx, url, filepath.Join(h.cfg.Profile, p.name+"-"+proc.Name+".pprof")); err != nil {
				h.notef("%s: profile of %s: %v", id, proc.Name, err)
			}
		})
	}
	return p
}

// end waits for the profiles and writes the statements that cost the
// most time, with their calls and rows.
func (p *profiler) end(ctx context.Context) {
	if p == nil {
		return
	}
	p.wg.Wait()
	rows, err := p.h.st.DB.QueryContext(ctx, `SELECT calls, round(total_exec_time::numeric, 1), round(total_plan_time::numeric, 1), rows,
		regexp_replace(query, '\s+', ' ', 'g') FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 40`)
	if err != nil {
		p.h.notef("%s: pg_stat_statements: %v", p.name, err)
		return
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString("calls\texec ms\tplan ms\trows\tquery\n")
	for rows.Next() {
		var calls, rowsN int64
		var exec, plan sql.NullFloat64
		var q string
		if err := rows.Scan(&calls, &exec, &plan, &rowsN, &q); err != nil {
			p.h.notef("%s: pg_stat_statements: %v", p.name, err)
			return
		}
		fmt.Fprintf(&b, "%d\t%.1f\t%.1f\t%d\t%s\n", calls, exec.Float64, plan.Float64, rowsN, q)
	}
	if err := os.WriteFile(filepath.Join(p.h.cfg.Profile, p.name+"-pg.tsv"), []byte(b.String()), 0o644); err != nil {
		p.h.notef("%s: %v", p.name, err)
	}
}

func download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
