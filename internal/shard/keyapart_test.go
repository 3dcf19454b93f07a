package shard

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// A peer whose channel crosses a network (KeyApart) is sent its spec
// without the API key, which its worker then takes from its environment;
// a local peer's spec carries it.
func TestKeyApartKeepsTheAPIKeyOffTheChannel(t *testing.T) {
	const key = "sk-kept-apart-0451"
	phases := []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Requests: 2}}
	shares, err := Split(phases, 2)
	require.NoError(t, err)
	co := &Coordinator{Clock: load.NewClock()}
	var workerEnds []net.Conn
	for _, apart := range []bool{false, true} {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		workerEnds = append(workerEnds, b)
		co.Peers = append(co.Peers, &Peer{Name: "worker", Conn: NewConn(a, a), KeyApart: apart,
			Wait: func() error { return nil }, Kill: func() { a.Close() }})
	}
	specs := make([]Spec, 2)
	for i := range specs {
		specs[i] = Spec{Worker: i, Workers: 2, Profile: plan.Profile{APIKey: key}, Phases: shares[i]}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = co.Run(ctx, phases, specs) }()

	var got []string
	for _, end := range workerEnds {
		w, err := Accept(end, end)
		require.NoError(t, err)
		got = append(got, w.Spec().Profile.APIKey)
		w.UseAPIKey("")
		assert.Equal(t, got[len(got)-1], w.Spec().Profile.APIKey, "an empty environment leaves the spec as sent")
		w.UseAPIKey(key)
		assert.Equal(t, key, w.Spec().Profile.APIKey)
		end.Close()
	}
	assert.Equal(t, []string{key, ""}, got)
}
