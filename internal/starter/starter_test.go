package starter

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/config"
)

// Every template has its metadata, reads as the current schema with no
// note, and passes the checks aiperf profile makes before sending (each
// sweep variation too); nothing in it is refused as not supported.
func TestTemplatesLoad(t *testing.T) {
	list := List()
	require.NotEmpty(t, list)
	for _, tm := range list {
		t.Run(tm.Name, func(t *testing.T) {
			assert.NotEmpty(t, tm.Title)
			assert.NotEmpty(t, tm.Description)
			assert.Contains(t, Categories, tm.Category)
			assert.NotEmpty(t, tm.Tags)
			assert.True(t, strings.HasPrefix(tm.Text, "# @template\n"), "the header comes first")
			f, err := config.Parse(tm.Name+".yaml", []byte(tm.Text))
			require.NoError(t, err)
			assert.Equal(t, config.Schema20, f.Schema)
			assert.Empty(t, f.Notes)
			p := f.Profile
			p.WaitForAll()
			require.NoError(t, p.Check())
			if f.Sweep != nil {
				for _, v := range f.Sweep.Variations {
					v.Profile.WaitForAll()
					require.NoError(t, v.Profile.Check(), "%v", v.Params)
				}
			}
		})
	}
	names := make([]string, len(list))
	for i, tm := range list {
		names[i] = tm.Name
	}
	assert.Contains(t, names, "minimal")
	assert.Contains(t, names, "goodput_slo", "yaml-config.md's config init example names it")
	assert.Subset(t, names, []string{"http_trace_metrics", "fixed_schedule", "gpu_telemetry", "ramping", "embeddings",
		"multi_turn_conversation"}, "AIPerf's bundled templates that run here")
}

// With replaces the model and the URL, singular or list, keeping the
// comments, and the result still loads with them.
func TestWithModelAndURL(t *testing.T) {
	for _, name := range []string{"minimal", "multi_url_load_balancing", "env_var_production"} {
		tm, err := Get(name)
		require.NoError(t, err)
		text, err := tm.With("meta-llama/Llama-3.1-70B-Instruct", "http://10.0.0.9:8000/v1/chat/completions")
		require.NoError(t, err)
		f, err := config.Parse(name+".yaml", []byte(text))
		require.NoError(t, err, text)
		assert.Equal(t, []string{"meta-llama/Llama-3.1-70B-Instruct"}, f.Profile.Model, name)
		assert.Equal(t, []string{"http://10.0.0.9:8000/v1/chat/completions"}, f.Profile.URL, name)
		assert.Contains(t, text, "# @template", "comments are kept")
	}
	tm, _ := Get("minimal")
	same, err := tm.With("", "")
	require.NoError(t, err)
	assert.Equal(t, tm.Text, same, "no override: the file as bundled")
	text, err := tm.With("123", "")
	require.NoError(t, err)
	f, err := config.Parse("m.yaml", []byte(text))
	require.NoError(t, err)
	assert.Equal(t, []string{"123"}, f.Profile.Model, "a numeric model name stays a string")
}

func TestGetAndSearch(t *testing.T) {
	_, err := Get("nosuch")
	require.ErrorContains(t, err, `no template "nosuch": the templates are `)
	var found []string
	for _, tm := range List() {
		if tm.Matches("SWEEP") {
			found = append(found, tm.Name)
		}
	}
	assert.Subset(t, found, []string{"sweep_distributions", "scenario_workload_profiles"})
	assert.False(t, slices.Contains(found, "minimal"))
}

// Named puts the file written into the template's comments, quoted when a
// shell needs it, and leaves the YAML itself alone.
func TestNamed(t *testing.T) {
	tm, err := Get("minimal")
	require.NoError(t, err)
	assert.Contains(t, tm.Text, "aiperf profile --config "+FilePlaceholder, "printed to stdout: the placeholder")
	text := Named(tm.Text, "start.yaml")
	assert.Contains(t, text, "# Run it:    aiperf profile --config start.yaml\n")
	assert.Contains(t, text, "# Check it:  aiperf config validate start.yaml\n")
	assert.NotContains(t, text, "minimal.yaml")
	assert.NotContains(t, text, FilePlaceholder)
	assert.Contains(t, Named(tm.Text, "my run's.yaml"), `aiperf profile --config 'my run'\''s.yaml'`)
	assert.Equal(t, "x: this.yaml\n# this.yaml\n", Named("x: this.yaml\n# this.yaml\n", FilePlaceholder), "only comments change")
	assert.Equal(t, "x: this.yaml\n# a.yaml\n", Named("x: this.yaml\n# this.yaml\n", "a.yaml"))
}
