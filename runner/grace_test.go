package runner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestGraceCoversEveryProfilerStop: an interrupted child is not killed while
// it may still be stopping its server profilers, one origin after another.
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
		proc  Process
		spec  Spec
		grace time.Duration
	}{
		{"default", Process{}, spec(false, 30, "http://a:1", "http://b:1", "http://c:1"), time.Minute},
		{"one origin fits the default", Process{}, spec(true, 30, "http://a:1"), time.Minute},
		{"three origins", Process{}, spec(true, 30, "http://a:1", "http://b:1", "http://c:1"), 100 * time.Second},
		{"one origin, two URLs", Process{}, spec(true, 55, "http://a:1/v1", "http://a:1"), 65 * time.Second},
		{"explicit", Process{Grace: time.Second}, spec(true, 30, "http://a:1", "http://b:1"), time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.grace, tt.proc.grace(tt.spec))
		})
	}
}
