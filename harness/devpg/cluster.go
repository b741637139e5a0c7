// Package devpg starts and stops a private PostgreSQL cluster from the server
// binaries installed on the machine (Debian's postgresql-15 package). It
// exists so that the dev command and the tests get a real PostgreSQL without
// Docker or a shared server: each caller owns a data directory and a loopback
// port, with trust authentication. Production uses a managed PostgreSQL and
// never imports this package.
//
// PostgreSQL refuses to run as root, so when the process is root the server
// binaries run as the postgres OS user, which must own the data directory and
// be able to traverse its parent directories.
package devpg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/freeport"
)

const host = "127.0.0.1"

// Options configures Start.
type Options struct {
	// Dir is the data directory. It is created and initialised with initdb
	// when it holds no PG_VERSION file, and reused as it is otherwise.
	Dir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int
	// LogFile receives the server log; empty means <Dir>/postgres.log. When
	// running as root it must be writable by the postgres OS user.
	LogFile string
	// Fast trades durability for speed: initdb --no-sync, and fsync,
	// synchronous_commit and full_page_writes off. For tests only; a machine
	// crash can corrupt such a cluster.
	Fast bool
	// Settings are more server settings, name=value (max_connections=300).
	Settings []string
}

// Cluster is a server started by Start.
type Cluster struct {
	Dir     string // absolute data directory
	Port    int
	LogFile string

	bin     string
	cred    *syscall.Credential // nil: run the binaries as the current user
	mu      sync.Mutex
	stopped bool
}

// Start initialises o.Dir if needed, starts the server on 127.0.0.1 and
// returns once it accepts connections. A server still running on o.Dir (left
// by a process that was killed before calling Stop) is stopped first.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Dir == "" {
		return nil, errors.New("devpg: Options.Dir is required")
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Port: o.Port, bin: bin, cred: cred}
	if c.Dir, err = filepath.Abs(o.Dir); err != nil {
		return nil, err
	}
	c.LogFile = filepath.Join(c.Dir, "postgres.log")
	if o.LogFile != "" {
		if c.LogFile, err = filepath.Abs(o.LogFile); err != nil {
			return nil, err
		}
	}
	if c.Port == 0 {
		if c.Port, err = freeport.Loopback(); err != nil {
			return nil, err
		}
	}

	_, err = os.Stat(filepath.Join(c.Dir, "PG_VERSION"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = c.initdb(ctx, o.Fast)
	case err == nil:
		err = c.stopLeftover(ctx, "fast")
	}
	if err == nil {
		err = c.prepareLogFile()
	}
	for attempt := 1; err == nil; attempt++ {
		err = c.start(ctx, o.Fast, o.Settings)
		// Another process may have taken the free port we picked.
		if err == nil || o.Port != 0 || attempt == 3 || !strings.Contains(err.Error(), "could not create any TCP/IP sockets") {
			break
		}
		c.Port, err = freeport.Loopback()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// URL returns the DSN of database on the cluster, as the postgres superuser.
func (c *Cluster) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@%s:%d/%s?sslmode=disable", host, c.Port, url.PathEscape(database))
}

// Stop shuts the server down (fast mode: open sessions are disconnected) and
// waits for it to exit. The data directory is kept. Stopping twice is a no-op.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.stopAndWait(ctx, "fast"); err != nil {
		return err
	}
	c.stopped = true
	return nil
}

// stopAndWait runs pg_ctl stop in mode and then waits for the postmaster
// process itself to be gone: pg_ctl -w returns once postmaster.pid is
// removed, which the postmaster does a moment before it exits, so a
// caller that checks for leftover processes right after could still see it.
func (c *Cluster) stopAndWait(ctx context.Context, mode string) error {
	pid := 0
	if b, err := os.ReadFile(filepath.Join(c.Dir, "postmaster.pid")); err == nil {
		pid, _ = strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	}
	if err := c.run(ctx, "pg_ctl", "stop", "-D", c.Dir, "-m", mode, "-w"); err != nil {
		return err
	}
	for pid > 0 && Running(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("devpg: postmaster %d still running after pg_ctl stop: %w", pid, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Running reports whether process pid exists and is not a zombie (one
// that exited and waits for its parent).
func Running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || !strings.HasPrefix(string(b[i+1:]), " Z")
}

// BinDir returns the directory holding initdb, pg_ctl and postgres.
func BinDir() (string, error) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	// Debian's layout, newest major version first.
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(dir string) int { v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir))); return v }
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	for _, dir := range append(dirs, matches...) {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	return "", errors.New("devpg: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found via `pg_config --bindir` " +
		"or in /usr/lib/postgresql/*/bin; install them with `apt-get install postgresql-15`")
}

func hasServerBinaries(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres", "pg_isready"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// initdb initialises a cluster in a sibling directory and renames it to
// c.Dir, so that an interrupted initdb never leaves a half-made cluster that
// a later Start would reuse. c.Dir must be missing or empty.
func (c *Cluster) initdb(ctx context.Context, fast bool) error {
	// Parents must be traversable by the server user.
	if err := os.MkdirAll(filepath.Dir(c.Dir), 0o755); err != nil {
		return err
	}
	tmp := c.Dir + ".initdb"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := c.chown(tmp); err != nil {
		return err
	}
	locale := "C" // byte-order collation everywhere; C.UTF-8 adds Unicode-aware lower()/upper()
	if runtime.GOOS == "linux" {
		locale = "C.UTF-8"
	}
	args := []string{"-D", tmp, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=" + locale}
	if fast {
		args = append(args, "--no-sync")
	}
	if err := c.run(ctx, "initdb", args...); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.Dir); err != nil { // fails when c.Dir is not empty
		return fmt.Errorf("devpg: %s is not a PostgreSQL data directory and not empty: %w", c.Dir, err)
	}
	return nil
}

// Halt stops a server still running on the data directory dir, at once
// (pg_ctl stop -m immediate: no checkpoint, sessions cut), as the server
// user; with none running it does nothing. It is for a cluster whose data
// is about to be thrown away, left running by a process killed before it
// could call Stop.
func Halt(ctx context.Context, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); errors.Is(err, fs.ErrNotExist) {
		return nil // never started, or stopped
	}
	bin, err := BinDir()
	if err != nil {
		return err
	}
	cred, err := serverCredential()
	if err != nil {
		return err
	}
	c := &Cluster{bin: bin, cred: cred}
	if c.Dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	return c.stopLeftover(ctx, "immediate")
}

// stopLeftover stops a server still running on c.Dir, in pg_ctl's shutdown
// mode. A postmaster.pid left by a crash (its process gone) needs
// nothing: the postmaster replaces it.
func (c *Cluster) stopLeftover(ctx context.Context, mode string) error {
	pidFile, err := os.ReadFile(filepath.Join(c.Dir, "postmaster.pid"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if c.command(ctx, "pg_ctl", "status", "-D", c.Dir).Run() != nil {
		return nil // no live process with that PID
	}
	// The PID is alive, but after a reboot it may belong to an unrelated
	// process: only signal it if a server answers where the file says.
	lines := strings.Split(string(pidFile), "\n")
	if len(lines) < 6 {
		return fmt.Errorf("devpg: unreadable %s/postmaster.pid", c.Dir)
	}
	addr := lines[5]
	if addr == "" || addr == "*" {
		addr = host
	}
	if ready := c.isReady(ctx, addr, lines[3]); ready.Run() != nil &&
		ready.ProcessState.ExitCode() != 1 { // 1: the server is up but rejecting connections (starting or stopping)
		return fmt.Errorf("devpg: %s/postmaster.pid names PID %s, which is alive but no server answers on port %s; "+
			"if no server uses this directory, delete that file", c.Dir, lines[0], lines[3])
	}
	return c.stopAndWait(ctx, mode)
}

func (c *Cluster) prepareLogFile() error {
	if err := os.MkdirAll(filepath.Dir(c.LogFile), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(c.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return c.chown(c.LogFile)
}

func (c *Cluster) start(ctx context.Context, fast bool, extra []string) error {
	socketDir := c.Dir
	if len(socketDir)+len("/.s.PGSQL.65535") > 100 { // Unix socket paths are limited to ~107 bytes
		socketDir = "" // TCP only
	}
	settings := []string{"listen_addresses=" + host, "port=" + strconv.Itoa(c.Port), "unix_socket_directories=" + socketDir}
	if fast {
		settings = append(settings, "fsync=off", "synchronous_commit=off", "full_page_writes=off")
	}
	settings = append(settings, extra...)
	var opts []string // pg_ctl hands these to /bin/sh
	for _, s := range settings {
		opts = append(opts, "-c", "'"+strings.ReplaceAll(s, "'", `'\''`)+"'")
	}
	timeout := 60 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(deadline), time.Second)
	}
	err := c.run(ctx, "pg_ctl", "start", "-D", c.Dir, "-l", c.LogFile, "-w",
		"-t", strconv.Itoa(int(timeout.Seconds()+0.5)), "-o", strings.Join(opts, " "))
	if err == nil { // pg_ctl -w waited for the "ready" state; check the TCP listener too
		if err = c.waitReady(ctx); err == nil {
			return nil
		}
	}
	// The server may be up even though pg_ctl failed (e.g. ctx ended).
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.run(stopCtx, "pg_ctl", "stop", "-D", c.Dir, "-m", "immediate", "-w")
	return fmt.Errorf("%w\nlast lines of %s:\n%s", err, c.LogFile, c.logTail())
}

func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		err := c.isReady(ctx, host, strconv.Itoa(c.Port)).Run()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devpg: no connection on port %d: %w (%w)", c.Port, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// isReady returns a pg_isready command; it exits 0 when the server accepts
// connections, 1 when it is up but rejecting them.
func (c *Cluster) isReady(ctx context.Context, addr, port string) *exec.Cmd {
	return exec.CommandContext(ctx, filepath.Join(c.bin, "pg_isready"), "-q", "-U", "postgres", "-d", "postgres", "-h", addr, "-p", port, "-t", "2")
}

// command runs a server binary as the server user, from the parent of the
// data directory (which that user can always traverse).
func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = filepath.Dir(c.Dir)
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	out, err := c.command(ctx, name, args...).CombinedOutput()
	if err != nil {
		if name == "pg_ctl" {
			name += " " + args[0]
		}
		return fmt.Errorf("devpg: %s: %w\n%s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (c *Cluster) chown(path string) error {
	if c.cred == nil {
		return nil
	}
	return os.Chown(path, int(c.cred.Uid), int(c.cred.Gid))
}

func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(c.LogFile)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(len(lines)-15, 0):], "\n")
}

// serverCredential returns the postgres OS user when running as root, since
// initdb and postgres refuse to run as root.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("devpg: running as root, PostgreSQL must run as the postgres OS user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
