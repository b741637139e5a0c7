package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// portStep and maxPortOffset bound the search for free ports: a second
// `make dev` beside a first lands 10 above every default, a third 20, …
const (
	portStep      = 10
	maxPortOffset = 200
)

// devPort is one listening port of make dev and whether the person chose
// it (a flag or its environment variable), which an offset leaves alone.
type devPort struct {
	name   string
	port   *int
	chosen bool
}

// applyOffset moves every port nobody chose by offset; with offset < 0 it
// looks for the smallest multiple of portStep at which they are all free
// (0 when the defaults are), and reports the offset it used.
func applyOffset(ports []devPort, offset int, free func(int) bool) (int, error) {
	if offset < 0 {
		found := false
		for off := 0; off <= maxPortOffset && !found; off += portStep {
			found = allFree(ports, off, free)
			offset = off
		}
		if !found {
			return 0, fmt.Errorf("no free ports up to %d above the defaults: pass --port-offset or each port's flag", maxPortOffset)
		}
	}
	for _, p := range ports {
		if !p.chosen && *p.port+offset > 65535 {
			return 0, fmt.Errorf("--port-offset %d moves the %s port past 65535", offset, p.name)
		}
	}
	for _, p := range ports {
		if !p.chosen {
			*p.port += offset
		}
	}
	return offset, nil
}

// dataInUse reports whether a make dev's PostgreSQL runs on the data
// folder dir: its postmaster.pid names a live process.
func dataInUse(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "postgres", "postmaster.pid"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

func allFree(ports []devPort, off int, free func(int) bool) bool {
	for _, p := range ports {
		if !p.chosen && !free(*p.port+off) {
			return false
		}
	}
	return true
}

// loopbackFree reports whether port can be listened on at 127.0.0.1.
func loopbackFree(port int) bool {
	if port <= 0 || port > 65535 {
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	return l.Close() == nil
}

// hostPort splits an address into its host and numeric port.
func hostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, errors.New("address " + addr + ": port is not a number")
	}
	return host, n, nil
}
