package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

func TestHookValues(t *testing.T) {
	tests := []struct {
		value string
		want  plan.ResetHook
	}{
		{"false", plan.ResetHook{Paths: []string{plan.DefaultResetPath}, Timeout: 30 * time.Second, MaxRetry: time.Minute, Guessed: true}},
		{"", plan.ResetHook{Paths: []string{plan.DefaultResetPath}, Timeout: 30 * time.Second, MaxRetry: time.Minute, Guessed: true}},
		{"true", plan.ResetHook{Enabled: true, Paths: []string{plan.DefaultResetPath}, Timeout: 30 * time.Second, MaxRetry: time.Minute, Guessed: true}},
		{"{}", plan.ResetHook{Enabled: true, Paths: []string{plan.DefaultResetPath}, Timeout: 30 * time.Second, MaxRetry: time.Minute, Guessed: true}},
		{"{path: /flush_cache, timeout_seconds: 5, max_retry_seconds: 0}",
			plan.ResetHook{Enabled: true, Paths: []string{"/flush_cache"}, Timeout: 5 * time.Second}},
		{"{maxRetrySeconds: 2.5}", plan.ResetHook{Enabled: true, Paths: []string{plan.DefaultResetPath}, Timeout: 30 * time.Second, MaxRetry: 2500 * time.Millisecond, Guessed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			f, err := parse("benchmark:", "  endpoint:", "    reset_kv_cache: "+tt.value)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f.Profile.ResetHook())
		})
	}
}

// TestCLIOverlayKeepsYAMLHookSettings is how `aiperf profile --config FILE
// --reset-kv-cache ...` combines the two: only explicitly set flags overlay.
func TestCLIOverlayKeepsYAMLHookSettings(t *testing.T) {
	yamlObject := []string{"benchmark:", "  endpoint:", "    reset_kv_cache: {path: /flush_cache, timeout_seconds: 5}"}
	tests := []struct {
		name     string
		yaml     []string
		cli      func(*plan.Profile)
		explicit []string
		want     plan.ResetHook
	}{
		{"bare --reset-kv-cache over a YAML object keeps its path and timeout", yamlObject,
			func(p *plan.Profile) { p.ResetKVCache = true }, []string{"reset_kv_cache"},
			plan.ResetHook{Enabled: true, Paths: []string{"/flush_cache"}, Timeout: 5 * time.Second, MaxRetry: time.Minute}},
		{"--reset-kv-cache-path overrides the YAML path only", yamlObject,
			func(p *plan.Profile) { p.ResetKVCachePath = []string{"/reset_prefix_cache"} }, []string{"reset_kv_cache_path"},
			plan.ResetHook{Enabled: true, Paths: []string{"/reset_prefix_cache"}, Timeout: 5 * time.Second, MaxRetry: time.Minute}},
		{"--reset-kv-cache over YAML false enables it", []string{"benchmark:", "  endpoint: {reset_kv_cache: false}"},
			func(p *plan.Profile) { p.ResetKVCache = true }, []string{"reset_kv_cache"},
			plan.ResetHook{Enabled: true, Paths: []string{plan.DefaultResetPath}, Timeout: 30 * time.Second, MaxRetry: time.Minute, Guessed: true}},
		{"no hook flag leaves the YAML object alone", yamlObject,
			func(p *plan.Profile) { p.Concurrency = plan.Ptr(3) }, []string{"concurrency"},
			plan.ResetHook{Enabled: true, Paths: []string{"/flush_cache"}, Timeout: 5 * time.Second, MaxRetry: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parse(tt.yaml...)
			require.NoError(t, err)
			cli := plan.NewProfile()
			tt.cli(&cli)
			profile := f.Profile
			require.NoError(t, profile.Overlay(&cli, tt.explicit))
			assert.Equal(t, tt.want, profile.ResetHook())
		})
	}
}
