// Package freeport picks free TCP ports on 127.0.0.1 for the harnesses
// that start servers (devpg, devprom, procstack, devtemporal). A port is
// free when picked and may be taken before the server binds it, so each
// caller retries a server that could not listen.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

const host = "127.0.0.1"

// Loopback returns a TCP port on 127.0.0.1 that was free a moment ago,
// chosen by the kernel (from its ephemeral range).
func Loopback() (int, error) {
	l, err := net.Listen("tcp", host+":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// InRange returns n distinct ports in [lo, hi) that were free a moment
// ago. Each is held (listened on) until all n are picked, so no two
// answers are the same port, as they could be if each were released
// before the next was picked.
func InRange(n, lo, hi int) ([]int, error) {
	if n > hi-lo {
		return nil, fmt.Errorf("freeport: %d ports asked of the %d in [%d, %d)", n, hi-lo, lo, hi)
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 200*n {
			return nil, errors.New("freeport: not enough free ports between " + strconv.Itoa(lo) + " and " + strconv.Itoa(hi-1))
		}
		port := lo + rand.IntN(hi-lo)
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			continue // taken, by someone else or by an earlier pick
		}
		held = append(held, l)
		ports = append(ports, port)
	}
	return ports, nil
}
