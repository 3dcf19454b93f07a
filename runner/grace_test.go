package runner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestGraceCoversEveryProfilerStop: an interrupted child is not killed while
// it may still be waiting for the answer of a profiler start in flight and
// then stopping its server profilers, one origin after another.
func TestGraceCoversEveryProfilerStop(t *testing.T) {
	spec := func(profiler bool, timeout float64, urls ...string) Spec {
		p := plan.NewProfile()
		p.URL = urls
		if profiler {
			p.ServerProfilerTimeoutSeconds = plan.Ptr(timeout) // implies --server-profiler
		}
		return Spec{Profile: p}
	}
	tests := []struct {
		name  string
		proc  Local
		spec  Spec
		grace time.Duration
	}{
		{"default", Local{}, spec(false, 30, "http://a:1", "http://b:1", "http://c:1"), time.Minute},
		{"one origin fits the default", Local{}, spec(true, 20, "http://a:1"), time.Minute},
		{"one origin at the default timeout", Local{}, spec(true, 30, "http://a:1"), 70 * time.Second},
		{"three origins", Local{}, spec(true, 30, "http://a:1", "http://b:1", "http://c:1"), 130 * time.Second},
		{"one origin, two URLs", Local{}, spec(true, 55, "http://a:1/v1", "http://a:1"), 120 * time.Second},
		{"explicit", Local{Grace: time.Second}, spec(true, 30, "http://a:1", "http://b:1"), time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.grace, tt.proc.grace(tt.spec))
		})
	}
}
