package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNetworkLatencyOptions(t *testing.T) {
	p := valid()
	assert.True(t, p.Network().Off())

	p.NetworkLatencyAutomatic, p.NetworkLatencyPingInterval = true, Ptr(0.25)
	require.NoError(t, p.Check())
	assert.Equal(t, NetworkRTT{Probe: true, Interval: 250 * time.Millisecond}, p.Network())

	p = valid()
	p.NetworkLatencyMean = Ptr(5.0)
	require.NoError(t, p.Check())
	assert.Equal(t, int64(5_000_000), p.Network().MeanNs)

	bad := valid()
	bad.NetworkLatencyAutomatic, bad.NetworkLatencyMean = true, Ptr(-1.0)
	bad.NetworkLatencyPingInterval = Ptr(0.0)
	err := bad.Check()
	require.Error(t, err)
	for _, want := range []string{"--network-latency-mean cannot be used with --network-latency-automatic",
		"--network-latency-mean must be a round trip in ms, 0 or more, got -1",
		"--network-latency-ping-interval must be between 0.01 and 3600 seconds, got 0"} {
		assert.Contains(t, err.Error(), want)
	}
	alone := valid()
	alone.NetworkLatencyPingInterval = Ptr(2.0)
	require.ErrorContains(t, alone.Check(), "--network-latency-ping-interval needs --network-latency-automatic")
}
