package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// TestConsoleWarmupSaysWhatWasSent: the warmup line counts every warmup
// request sent, not only the successful ones, and says how many failed or
// were cancelled.
func TestConsoleWarmupSaysWhatWasSent(t *testing.T) {
	failed := func(index int) metrics.Record {
		r := streamed(index, int64(index), 64, 40)
		r.ResponseNs, r.FirstOutputNs, r.OutputTokens, r.Usage = metrics.Stamps{}, 0, 0, nil
		r.Status, r.Error = 500, &metrics.Error{Code: 500, Type: "HTTPError", Message: "Internal Server Error"}
		return r
	}
	cases := []struct {
		name    string
		records []metrics.Record
		want    string
	}{
		{"all failed", []metrics.Record{failed(0), failed(1)},
			"Warmup: 2 requests (2 failed), excluded from these metrics"},
		{"all succeeded", []metrics.Record{streamed(0, 0, 64, 40), streamed(1, 1, 64, 41)},
			"Warmup: 2 requests, excluded from these metrics"},
		{"mixed", func() []metrics.Record {
			c := streamed(2, 2, 64, 42)
			c.Cancelled = true
			return []metrics.Record{streamed(0, 0, 64, 40), failed(1), c}
		}(), "Warmup: 3 requests (1 failed, 1 cancelled), excluded from these metrics"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := minimalRun()
			warm := metrics.Summarize(tc.records, true)
			run.Warmup = &warm
			var buf bytes.Buffer
			Console(Wide(&buf), run)
			assert.Contains(t, buf.String(), tc.want)
		})
	}
}
