package netrtt

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTargets(t *testing.T) {
	got := Targets([]string{"http://user:pw@a:8000/v1?key=s3cret", "a:8000", "https://b", "http://b", "localhost:9", "::bad"})
	assert.Equal(t, []Target{
		{URL: "http://a:8000", Host: "a", Port: 8000},
		{URL: "https://b", Host: "b", Port: 443},
		{URL: "http://b", Host: "b", Port: 80},
		{URL: "http://localhost:9", Host: "localhost", Port: 9},
	}, got, "one target per host:port, the scheme's port by default, no credentials, path or query")
}

// listener accepts and closes connections, counting them.
func listener(t *testing.T) (Target, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	return Target{URL: "http://localhost:" + strconv.Itoa(port), Host: "localhost", Port: port}, &n
}

func clock() func() int64 {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}

// TestProbesTopUp: a run shorter than the interval still ends with
// MinSamples successful handshakes per target (Stop's top-up), each one a
// connection the server accepted; a target nobody listens on gives failed
// samples and no mean of its own.
func TestProbesTopUp(t *testing.T) {
	up, accepted := listener(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	downPort := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	down := Target{URL: "http://127.0.0.1:" + strconv.Itoa(downPort), Host: "127.0.0.1", Port: downPort}

	dialled := make(chan struct{}, 64)
	p := Start(context.Background(), Options{Targets: []Target{up, down}, Interval: time.Hour, Now: clock(),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			defer func() { dialled <- struct{}{} }()
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}})
	<-dialled // the first probes ended: none is cut by Stop
	<-dialled
	samples := p.Stop()
	var ok, failed int
	for i, s := range samples {
		if i > 0 {
			assert.LessOrEqual(t, samples[i-1].AtNs, s.AtNs, "in the order they were taken")
		}
		switch s.Target {
		case up:
			require.True(t, s.OK, s.Err)
			assert.Positive(t, s.RTTNs)
			ok++
		case down:
			assert.False(t, s.OK)
			assert.NotEmpty(t, s.Err)
			assert.Zero(t, s.RTTNs)
			failed++
		}
	}
	assert.Equal(t, MinSamples, ok)
	require.Eventually(t, func() bool { return accepted.Load() >= int64(ok) }, 10*time.Second, time.Millisecond,
		"the server accepts the handshakes (hang guard)")
	assert.Equal(t, int64(ok), accepted.Load(), "every successful sample is a handshake the server saw, and only those")
	assert.Positive(t, failed)
	assert.LessOrEqual(t, failed, 2*MinSamples+1, "the top-up gives up on a target that keeps failing")
	mean, has := Mean(samples)
	assert.True(t, has)
	assert.Positive(t, mean)

	_, has = Mean(samples[:0])
	assert.False(t, has)
}

// TestInterruptedRunIsNotToppedUp: once the run's context ended, Stop
// returns at once with what it has.
func TestInterruptedRunIsNotToppedUp(t *testing.T) {
	up, accepted := listener(t)
	ctx, cancel := context.WithCancel(context.Background())
	dialled := make(chan struct{}, 16)
	p := Start(ctx, Options{Targets: []Target{up}, Interval: time.Hour, Now: clock(),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			defer func() { dialled <- struct{}{} }()
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}})
	<-dialled // the first probe
	cancel()
	samples := p.Stop()
	assert.LessOrEqual(t, len(samples), 1)
	assert.LessOrEqual(t, accepted.Load(), int64(1))
}

// TestTopUpCountsFailures: the top-up probes a target until it has
// MinSamples successes or 2×MinSamples of its probes failed, the failures
// counted, not the tries: a server that refuses the first six top-up
// handshakes (a closed port) and then accepts still ends with MinSamples.
func TestTopUpCountsFailures(t *testing.T) {
	up, accepted := listener(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())

	var calls atomic.Int64
	first := make(chan struct{})
	p := Start(context.Background(), Options{Targets: []Target{up}, Interval: time.Hour, Now: clock(),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			n := calls.Add(1)
			if n == 1 {
				defer close(first)
			}
			if n <= 7 { // the first probe and six top-up probes are refused
				addr = closed
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}})
	<-first
	samples := p.Stop()
	var ok, failed int
	for _, s := range samples {
		if s.OK {
			ok++
		} else {
			failed++
		}
	}
	assert.Equal(t, MinSamples, ok, "six failures are fewer than ten: the top-up goes on to five successes")
	assert.Equal(t, int64(1+6+MinSamples), calls.Load(), "the first probe, six refused top-up probes, five accepted")
	assert.GreaterOrEqual(t, failed, 6, "the first probe's failure is dropped when Stop cut it")
	require.Eventually(t, func() bool { return accepted.Load() >= int64(ok) }, 10*time.Second, time.Millisecond,
		"the server accepts the handshakes (hang guard)")

	// A target that never answers gets 2×MinSamples failed top-up probes.
	p = Start(context.Background(), Options{Targets: []Target{up}, Interval: time.Hour, Now: clock(),
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, closed)
		}})
	samples = p.Stop()
	assert.GreaterOrEqual(t, len(samples), 2*MinSamples)
	assert.LessOrEqual(t, len(samples), 2*MinSamples+1, "the first probe, if it ended before Stop, then ten failures")
}

// TestTargetsOf: each URL's target, shared by the URLs of one host:port.
func TestTargetsOf(t *testing.T) {
	targets, of := TargetsOf([]string{"http://a:8000/v1", "::bad", "https://b", "a:8000/x?y=1", "http://b:443"})
	assert.Equal(t, []Target{{URL: "http://a:8000", Host: "a", Port: 8000}, {URL: "https://b", Host: "b", Port: 443}}, targets)
	assert.Equal(t, []int{0, -1, 1, 0, 1}, of)
}

// TestMeanByTarget: each target's mean over its own successful probes.
func TestMeanByTarget(t *testing.T) {
	a, b, c := Target{URL: "http://a", Host: "a", Port: 80}, Target{URL: "http://b", Host: "b", Port: 80},
		Target{URL: "http://c", Host: "c", Port: 80}
	samples := []Sample{{Target: a, OK: true, RTTNs: 10}, {Target: b, OK: true, RTTNs: 1000}, {Target: a, OK: true, RTTNs: 30},
		{Target: a, Err: "refused"}, {Target: c, Err: "refused"}}
	assert.Equal(t, []TargetRTT{{Target: a, RTTNs: 20, OK: 2, Failed: 1}, {Target: b, RTTNs: 1000, OK: 1},
		{Target: c, Failed: 1}}, MeanByTarget(samples, []Target{a, b, c}))
}
