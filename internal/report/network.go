package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/aiperf-go/aiperf/internal/netrtt"
	"github.com/aiperf-go/aiperf/internal/result"
)

// NetworkJSONLFile is AIPerf's export of the network probes
// (--network-latency-automatic).
const NetworkJSONLFile = "profile_export_network_latency.jsonl"

// WriteNetworkJSONL writes profile_export_network_latency.jsonl: one line
// per probe, in AIPerf's NetworkLatencySample shape (timestamp_ns on the
// wall clock, target_url, target_host, target_port, probe_type, rtt_ns
// null when it failed, success, error {code, type, message} or null).
func WriteNetworkJSONL(w io.Writer, run *result.Run) error {
	bw := bufio.NewWriter(w)
	l := newLine()
	for _, s := range run.Network.Samples {
		l.reset()
		l.value(networkLine(s))
		if l.err != nil {
			return fmt.Errorf("write network latency export: %w", l.err)
		}
		l.raw("\n")
		if _, err := bw.Write(l.buf.Bytes()); err != nil {
			return fmt.Errorf("write network latency export: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write network latency export: %w", err)
	}
	return nil
}

// networkLine is one probe's line.
func networkLine(s netrtt.Sample) object {
	var rtt, errDetails any
	if s.OK {
		rtt = s.RTTNs
	} else {
		errDetails = object{{"code", nil}, {"type", "ConnectionError"}, {"message", s.Err}}
	}
	return object{{"timestamp_ns", s.WallNs}, {"target_url", s.Target.URL}, {"target_host", s.Target.Host},
		{"target_port", s.Target.Port}, {"probe_type", netrtt.ProbeType}, {"rtt_ns", rtt}, {"success", s.OK},
		{"error", errDetails}}
}
