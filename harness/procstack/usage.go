package procstack

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openlayer-ai/workspace-service/harness/devpg"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// Usage is what a process (or a group of them) has cost so far.
type Usage struct {
	// CPUSeconds is user plus system time since the process started,
	// including that of its children it has waited for.
	CPUSeconds float64
	// RSSMiB is the resident memory now: VmRSS for one process; for a
	// group, the sum of each member's proportional share (Pss), so pages
	// shared between members (PostgreSQL's shared buffers) count once.
	RSSMiB float64
	// Processes is how many processes were summed.
	Processes int
}

// ReadUsage reads one process's CPU time and resident memory from /proc.
func ReadUsage(pid int) (Usage, error) {
	st, err := readStat(pid)
	if err != nil {
		return Usage{}, err
	}
	rss, err := statusKB(pid, "VmRSS:")
	if err != nil {
		return Usage{}, err
	}
	return Usage{CPUSeconds: st.cpu, RSSMiB: rss / 1024, Processes: 1}, nil
}

// TreeUsage sums a process and its direct children (a PostgreSQL
// postmaster and its backends and auxiliary processes): CPU includes
// children that have already exited (the parent's cutime and cstime), and
// memory is the sum of proportional set sizes.
func TreeUsage(root int) (Usage, error) {
	rootStat, err := readStat(root)
	if err != nil {
		return Usage{}, err
	}
	pids := []int{root}
	u := Usage{CPUSeconds: rootStat.cpu}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return Usage{}, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.ppid != root {
			continue // gone meanwhile, or not a child
		}
		u.CPUSeconds += st.cpu
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		kb, err := rollupKB(pid, "Pss:")
		if err != nil {
			// smaps_rollup needs ptrace rights; fall back to VmRSS.
			if kb, err = statusKB(pid, "VmRSS:"); err != nil {
				continue
			}
		}
		u.RSSMiB += kb / 1024
		u.Processes++
	}
	return u, nil
}

// PostmasterPID reads the postmaster's process id from a data directory.
func PostmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

type procStat struct {
	ppid int
	cpu  float64 // utime + stime + cutime + cstime, seconds
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) is parenthesised and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ppid, _ := strconv.Atoi(f[1]) // field 4
	var ticks float64
	for _, k := range []int{11, 12, 13, 14} { // fields 14-17: utime stime cutime cstime
		v, err := strconv.ParseFloat(f[k], 64)
		if err != nil {
			return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += v
	}
	return procStat{ppid: ppid, cpu: ticks / clockTicks}, nil
}

func statusKB(pid int, key string) (float64, error) {
	return fieldKB("/proc/"+strconv.Itoa(pid)+"/status", key)
}

func rollupKB(pid int, key string) (float64, error) {
	return fieldKB("/proc/"+strconv.Itoa(pid)+"/smaps_rollup", key)
}

// fieldKB reads a "Key:   123 kB" line.
func fieldKB(path, key string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) >= 1 {
				return strconv.ParseFloat(f[0], 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in %s", key, path)
}

// Alive reports whether process pid exists and is not a zombie (one that
// exited and waits for its parent): what a test checking that nothing
// outlived a stack asks.
func Alive(pid int) bool { return devpg.Running(pid) }
