package freeport

import (
	"net"
	"slices"
	"strconv"
	"testing"
)

// Asked for as many ports as a range holds, InRange returns each of them
// once: it holds every pick until all are made. Picking each port
// independently and releasing it at once (what procstack did for
// Temporal's nine ports) repeats one here almost surely (all nine
// distinct by chance: 9!/9^9, under 0.1%).
func TestInRangeDistinct(t *testing.T) {
	const n = 9
	lo := freeWindow(t, n)
	for range 20 {
		ports, err := InRange(n, lo, lo+n)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(ports))
		for i, p := range got {
			if p != lo+i {
				t.Fatalf("InRange(%d, %d, %d) = %v: want each port of the range once", n, lo, lo+n, ports)
			}
		}
	}
	if _, err := InRange(n+1, lo, lo+n); err == nil {
		t.Errorf("InRange(%d) of a %d-port range: no error", n+1, n)
	}
}

// A port that is taken is never returned.
func TestInRangeSkipsTaken(t *testing.T) {
	lo := freeWindow(t, 3)
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(lo+1)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ports, err := InRange(2, lo, lo+3)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ports, lo+1) {
		t.Errorf("InRange returned %v, which holds the taken port %d", ports, lo+1)
	}
	if _, err := InRange(3, lo, lo+3); err == nil {
		t.Error("three ports of a range where one is taken: no error")
	}
}

func TestLoopback(t *testing.T) {
	port, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d from Loopback cannot be listened on: %v", port, err)
	}
	l.Close()
}

// freeWindow finds n consecutive ports below the ephemeral range that are
// free now.
func freeWindow(t *testing.T, n int) int {
	t.Helper()
	for lo := 20000; lo < 30000; lo += 97 {
		free := true
		for p := lo; p < lo+n && free; p++ {
			l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
			if err != nil {
				free = false
				continue
			}
			l.Close()
		}
		if free {
			return lo
		}
	}
	t.Fatalf("no %d consecutive free ports between 20000 and 30000", n)
	return 0
}
