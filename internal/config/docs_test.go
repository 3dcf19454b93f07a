package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// docs is testdata/aiperf_docs: AIPerf's documented examples, verbatim.
const docs = "testdata/aiperf_docs"

func readDoc(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docs, name))
	require.NoError(t, err)
	return b
}

// graft is base with fragment's top-level keys put in (replacing base's):
// how the docs' snippets are meant to be read.
func graft(t *testing.T, base, fragment string) []byte {
	t.Helper()
	var b, f yaml.Node
	require.NoError(t, yaml.Unmarshal(readDoc(t, base), &b))
	require.NoError(t, yaml.Unmarshal(readDoc(t, fragment), &f))
	root, frag := b.Content[0], f.Content[0]
	for i := 0; i+1 < len(frag.Content); i += 2 {
		if child(root, frag.Content[i].Value) != nil {
			setChild(root, frag.Content[i].Value, frag.Content[i+1])
			continue
		}
		root.Content = append(root.Content, frag.Content[i], frag.Content[i+1])
	}
	out, err := yaml.Marshal(&b)
	require.NoError(t, err)
	return out
}

// checked parses a doc and checks every cell as aiperf profile does before
// sending anything.
func checked(t *testing.T, name string, data []byte) *File {
	t.Helper()
	f, err := Parse(name, data)
	require.NoError(t, err, name)
	profiles := []plan.Profile{f.Profile}
	if f.Sweep != nil {
		profiles = profiles[:0]
		for _, v := range f.Sweep.Variations {
			profiles = append(profiles, v.Profile)
		}
	}
	for _, p := range profiles {
		if len(p.Model) == 0 { // a snippet without a model: aiperf profile gets --model
			p.Model = []string{"m"}
		}
		p.WaitForAll()
		require.NoError(t, p.Check(), name)
	}
	return f
}

// Every YAML example of AIPerf's current yaml-config.md and sweeps.md
// reads as schema 2.0 with nothing to note (its snippets grafted onto the
// example they extend), and every cell passes the checks made before any
// traffic.
func TestAIPerfCurrentDocsRead(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-doc-test")
	for _, name := range []string{
		"yaml-config/benchmark.yaml", "yaml-config/minimal.yaml", "yaml-config/shorthand.yaml",
		"yaml-config/named.yaml", "yaml-config/phase_kinds.yaml", "yaml-config/naming_snake.yaml",
		"yaml-config/naming_camel.yaml", "yaml-config/env_vars.yaml", "yaml-config/variables.yaml",
		"yaml-config/multiple_phases.yaml", "yaml-config/grid_sweep.yaml", "yaml-config/multi_run.yaml",
		"sweeps/saturation.yaml", "sweeps/zip.yaml", "sweeps/scenarios.yaml", "sweeps/isl_grid.yaml",
		"sweeps/isl_osl_scenarios.yaml", "sweeps/multi_run.yaml", "sweeps/sweep_multi_run.yaml",
		"sweeps/env_sweep.yaml", "yaml-config/inline_dataset.yaml",
	} {
		t.Run(name, func(t *testing.T) {
			f := checked(t, name, readDoc(t, name))
			assert.Equal(t, Schema20, f.Schema)
			assert.Empty(t, f.Notes)
		})
	}
	f, err := Parse("inline.yaml", readDoc(t, "yaml-config/inline_dataset.yaml"))
	require.NoError(t, err)
	assert.Equal(t, plan.InlineRecords, f.Profile.InputFile, "until aiperf profile writes them to a file")
	assert.Equal(t, "{\"text\":\"What is machine learning?\"}\n{\"output_length\":200,\"text\":\"Explain GANs.\"}\n", f.Profile.InputRecords)
	assert.Equal(t, "single_turn", f.Profile.CustomDatasetType)
}

// What the docs say each example means, in the values read.
func TestAIPerfCurrentDocsMeaning(t *testing.T) {
	f := checked(t, "variables.yaml", readDoc(t, "yaml-config/variables.yaml"))
	p := f.Profile
	assert.Equal(t, 160, p.NumDatasetEntries, "{{ base_concurrency * 10 }}")
	assert.Equal(t, 512, p.SyntheticInputTokensMean)
	assert.Equal(t, 51.0, p.SyntheticInputTokensStddev, "{{ isl_target // 10 }}: integer division")
	assert.Equal(t, []plan.Phase{
		{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 8, Requests: 80, GracePeriod: -1},
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 64, Rate: 30, RateMode: plan.RateGamma, Duration: 120,
			RateRamp: 30, GracePeriod: plan.DefaultGracePeriod},
	}, p.Phases)

	f = checked(t, "phase_kinds.yaml", readDoc(t, "yaml-config/phase_kinds.yaml"))
	require.Len(t, f.Profile.Phases, 4)
	assert.Equal(t, 300.0, f.Profile.Phases[0].Duration, "5m")
	assert.Equal(t, 1800.0, f.Profile.Phases[1].Duration, "30m")
	assert.Equal(t, &plan.Cancellation{Rate: 50}, f.Profile.Phases[2].Cancellation)

	snake := checked(t, "s.yaml", readDoc(t, "yaml-config/naming_snake.yaml"))
	camel := checked(t, "c.yaml", readDoc(t, "yaml-config/naming_camel.yaml"))
	assert.Equal(t, snake.MultiRun, camel.MultiRun, "both naming styles")
	assert.Equal(t, MultiRun{NumRuns: 3, CooldownSeconds: 15, WarmupFirstTrialOnly: true}, snake.MultiRun)
	assert.Equal(t, int64(42), snake.Profile.RandomSeed, "set_consistent_seed's default seed")

	f = checked(t, "grid.yaml", readDoc(t, "yaml-config/grid_sweep.yaml"))
	require.Len(t, f.Sweep.Variations, 9)
	last := f.Sweep.Variations[8]
	assert.Equal(t, 2048, last.Profile.SyntheticInputTokensMean)
	assert.Equal(t, 50.0, last.Profile.Phases[0].Rate)

	f = checked(t, "sweep_multi_run.yaml", readDoc(t, "sweeps/sweep_multi_run.yaml"))
	assert.True(t, f.MultiRun.WarmupFirstTrialOnly)
	assert.Equal(t, int64(42), f.Profile.RandomSeed)

	f = checked(t, "same_seed.yaml", graft(t, "sweeps/saturation.yaml", "sweeps/same_seed.yaml"))
	assert.Equal(t, plan.Ptr(true), f.Sweep.SameSeed)
	f = checked(t, "cooldown.yaml", graft(t, "sweeps/saturation.yaml", "sweeps/cooldown.yaml"))
	assert.Equal(t, plan.Ptr(30.0), f.Sweep.CooldownSeconds)
	assert.Equal(t, 10.0, f.MultiRun.CooldownSeconds)
}

// sweeps.md: the bare-name sugar and the canonical paths are the same
// sweep; a scenarios sweep of distribution shapes replaces the whole isl.
func TestAIPerfSweepSnippets(t *testing.T) {
	bare := checked(t, "bare.yaml", graft(t, "sweeps/saturation.yaml", "sweeps/sugar_bare.yaml"))
	canon := checked(t, "canon.yaml", graft(t, "sweeps/saturation.yaml", "sweeps/sugar_canonical.yaml"))
	require.Len(t, bare.Sweep.Variations, 12)
	for i := range bare.Sweep.Variations {
		assert.Equal(t, canon.Sweep.Variations[i].Profile, bare.Sweep.Variations[i].Profile)
	}

	for _, dir := range []string{"sweeps", "sweeps-flat"} {
		f := checked(t, dir, graft(t, dir+"/isl_grid.yaml", dir+"/distribution_scenarios.yaml"))
		var got [][2]float64
		for _, v := range f.Sweep.Variations {
			got = append(got, [2]float64{float64(v.Profile.SyntheticInputTokensMean), v.Profile.SyntheticInputTokensStddev})
		}
		assert.Equal(t, [][2]float64{{512, 0}, {512, 100}, {512, 20}}, got, dir)
	}
}

// The older shapes of sweeps.md (before the envelope) read as the same
// cells as their current twins, each with a note naming the shape and
// the command that rewrites the file.
func TestAIPerfOlderDocsReadAsTheirTwins(t *testing.T) {
	for _, name := range []string{"saturation.yaml", "scenarios.yaml", "isl_grid.yaml", "sweep_multi_run.yaml", "env_sweep.yaml"} {
		t.Run(name, func(t *testing.T) {
			old := checked(t, name, readDoc(t, "sweeps-flat/"+name))
			cur := checked(t, name, readDoc(t, "sweeps/"+name))
			assert.Equal(t, SchemaFlat, old.Schema)
			require.NotEmpty(t, old.Notes)
			assert.Contains(t, old.Notes[0], "read as AIPerf's pre-envelope flat shape")
			assert.Contains(t, old.Notes[0], "`aiperf config migrate "+name+"` rewrites the file")
			assert.Equal(t, cur.MultiRun, old.MultiRun)
			require.Len(t, old.Sweep.Variations, len(cur.Sweep.Variations))
			for i := range cur.Sweep.Variations {
				assert.Equal(t, cur.Sweep.Variations[i].Profile, old.Sweep.Variations[i].Profile, "variation %d", i)
			}
		})
	}
	for _, name := range []string{"migrating_before.yaml", "migrating_after.yaml"} {
		f := checked(t, name, readDoc(t, "sweeps-flat/"+name))
		assert.Equal(t, SchemaEnvelopeVariables, f.Schema, name)
		require.Len(t, f.Sweep.Variations, 3)
		assert.Equal(t, 4, f.Sweep.Variations[2].Profile.Phases[0].Concurrency)
	}
}

// config migrate rewrites each older doc as schema 2.0: it then reads the
// same, with no note, and migrating again changes nothing; comments stay.
func TestMigrateDocs(t *testing.T) {
	for _, name := range []string{"saturation.yaml", "scenarios.yaml", "sweep_multi_run.yaml", "migrating_before.yaml"} {
		t.Run(name, func(t *testing.T) {
			data := readDoc(t, "sweeps-flat/"+name)
			out, schema, changed, err := Migrate(name, data)
			require.NoError(t, err)
			assert.True(t, changed)
			assert.NotEqual(t, Schema20, schema)
			assert.True(t, strings.HasPrefix(string(out), `schemaVersion: "2.0"`), "%s", out)
			before, after := checked(t, name, data), checked(t, name, out)
			assert.Equal(t, Schema20, after.Schema)
			assert.Empty(t, after.Notes)
			assert.Equal(t, before.Profile, after.Profile)
			require.Len(t, after.Sweep.Variations, len(before.Sweep.Variations))
			for i := range before.Sweep.Variations {
				assert.Equal(t, before.Sweep.Variations[i].Profile, after.Sweep.Variations[i].Profile)
			}
			again, _, changed, err := Migrate(name, out)
			require.NoError(t, err)
			assert.False(t, changed, "a 2.0 file is left alone")
			assert.Equal(t, out, again)
		})
	}
	out, _, _, err := Migrate("s.yaml", readDoc(t, "sweeps-flat/saturation.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(out), "rate: 10 # overridden by sweep", "comments are kept")
	assert.Contains(t, string(out), "parameters:\n    phases.profiling.concurrency:")
}
