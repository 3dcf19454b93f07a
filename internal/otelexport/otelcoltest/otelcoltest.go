// Package otelcoltest runs the OpenTelemetry Collector's own OTLP receiver (its
// Go modules, HTTP only) in a test, on a loopback port, with a sink that
// keeps every batch it accepts, and reads the received data points back.
package otelcoltest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Collector is the collector's OTLP receiver and its sink.
type Collector struct {
	URL  string // its /v1/metrics endpoint
	Sink *consumertest.MetricsSink
}

// Start starts the collector's OTLP/HTTP receiver on a free
// loopback port (a port taken between the probe and the bind is retried).
func Start(t testing.TB) *Collector {
	t.Helper()
	f := otlpreceiver.NewFactory()
	for range 20 {
		addr := freeAddr(t)
		cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
		cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]() // HTTP only
		cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
		sink := new(consumertest.MetricsSink)
		r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
		require.NoError(t, err)
		err = r.Start(context.Background(), componenttest.NewNopHost())
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
		return &Collector{URL: "http://" + addr + "/v1/metrics", Sink: sink}
	}
	t.Fatal("no free loopback port for the collector")
	return nil
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// Point is one received histogram or sum data point, flattened.
type Point struct {
	Metric string
	Attrs  map[string]string
	Count  uint64  // a histogram's
	Sum    float64 // a histogram's sum
	Value  int64   // a sum's or gauge's
	Res    map[string]string
}

// Last returns, for each metric and attribute set, the data point of the
// last batch that held it: with cumulative temporality, the totals.
func (c *Collector) Last() map[string]Point {
	out := map[string]Point{}
	for _, md := range c.Sink.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := range rms.Len() {
			rm := rms.At(i)
			res := attrMap(rm.Resource().Attributes())
			sms := rm.ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					eachPoint(ms.At(k), func(p Point) {
						p.Res = res
						out[p.Metric+fmt.Sprint(p.Attrs)] = p
					})
				}
			}
		}
	}
	return out
}

func eachPoint(m pmetric.Metric, yield func(Point)) {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			yield(Point{Metric: m.Name(), Attrs: attrMap(dp.Attributes()), Count: dp.Count(), Sum: dp.Sum()})
		}
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		for i := range dps.Len() {
			yield(Point{Metric: m.Name(), Attrs: attrMap(dps.At(i).Attributes()), Value: dps.At(i).IntValue()})
		}
	case pmetric.MetricTypeGauge:
		dps := m.Gauge().DataPoints()
		for i := range dps.Len() {
			yield(Point{Metric: m.Name(), Attrs: attrMap(dps.At(i).Attributes()), Value: dps.At(i).IntValue()})
		}
	}
}

func attrMap(a pcommon.Map) map[string]string {
	out := map[string]string{}
	a.Range(func(k string, v pcommon.Value) bool {
		out[k] = v.AsString()
		return true
	})
	return out
}

// Points sums the data points of metric whose attributes include want.
func Points(last map[string]Point, metric string, want map[string]string) (n uint64, value int64) {
	for _, p := range last {
		if p.Metric != metric {
			continue
		}
		ok := true
		for k, v := range want {
			if p.Attrs[k] != v {
				ok = false
			}
		}
		if ok {
			n += p.Count
			value += p.Value
		}
	}
	return n, value
}

// Wait polls cond (a hang guard, not a timing assertion).
func Wait(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
