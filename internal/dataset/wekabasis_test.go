package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wekaNested is a trace whose main agent calls at 0 s and after its
// subagent "a", spawned at marker s with a call at each of inner (one a
// line: the subagent on line 3, its calls on lines 5, 6, …).
func wekaNested(id string, marker float64, inner ...float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id": %q, "models": ["m"], "block_size": 64, "hash_id_scope": "local", "requests": [
  {"t": 0, "type": "n", "model": "m", "in": 64, "out": 4, "hash_ids": [1]},
  {"t": %v, "type": "subagent", "agent_id": "a", "subagent_type": "Explore", "status": "completed", "models": ["m"],
   "requests": [`, id, marker)
	for k, t := range inner {
		if k > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n    {\"t\": %v, \"type\": \"n\", \"model\": \"m\", \"in\": 64, \"out\": 4, \"hash_ids\": [%d]}", t, 10+k)
	}
	fmt.Fprintf(&b, "\n  ]},\n  {\"t\": %v, \"type\": \"n\", \"model\": \"m\", \"in\": 128, \"out\": 4, \"hash_ids\": [1, 2]}\n]}\n", marker+1000)
	return b.String()
}

// writeWeka writes trace files (name → content) into a new directory.
func writeWeka(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, doc := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644))
	}
	return dir
}

// subagentTimes opens path on basis and returns the times (ms) of each
// subagent's calls, by session id, and the dataset's notes.
func subagentTimes(t *testing.T, path, basis string) (map[string][]float64, []string) {
	t.Helper()
	d, convs := open(t, Options{InputFile: path, WekaBasis: basis})
	out := map[string][]float64{}
	for _, c := range convs {
		if !strings.Contains(c.ID, "::sa:") {
			continue
		}
		for _, turn := range c.Turns {
			out[c.ID] = append(out[c.ID], turn.TimestampMs)
		}
	}
	return out, Notes(d)
}

// The bases read the same subagent calls (10 and 15 s after a spawn at
// 5 s, both after it) at different times: absolute as they are, relative
// after the spawn; auto finds none before its marker and reads them as
// absolute, saying so.
func TestWekaBasisAbsoluteAndRelative(t *testing.T) {
	dir := writeWeka(t, map[string]string{"x.json": wekaNested("x", 5, 10, 15)})
	abs, notes := subagentTimes(t, dir, WekaBasisAbsolute)
	assert.Equal(t, map[string][]float64{"x::sa:a": {10000, 15000}}, abs)
	assert.Empty(t, notes, "a given basis that clamped nothing: nothing to say")
	rel, notes := subagentTimes(t, dir, WekaBasisRelative)
	assert.Equal(t, map[string][]float64{"x::sa:a": {15000, 20000}}, rel)
	assert.Empty(t, notes)
	auto, notes := subagentTimes(t, dir, "")
	assert.Equal(t, abs, auto)
	assert.Equal(t, []string{"weka_trace: subagent request timestamps read with basis 'absolute' (auto heuristic found none of 2 nested " +
		"request(s) more than 1 µs before its subagent marker; the heuristic is not proof of the producer format: " +
		"give --weka-nested-timestamp-basis if it is known)"}, notes)
	explicit, _ := subagentTimes(t, dir, WekaBasisAuto)
	assert.Equal(t, abs, explicit)
}

// auto's choice is the corpus's: one call 100 s before its marker in one
// trace makes every trace's subagent times relative, those of a file read
// before it (x.json, whose times would be valid absolute) too.
func TestWekaBasisAutoIsCorpusWide(t *testing.T) {
	dir := writeWeka(t, map[string]string{"x.json": wekaNested("x", 5, 10, 15), "y.json": wekaNested("y", 100, 0, 7)})
	got, notes := subagentTimes(t, dir, "")
	assert.Equal(t, map[string][]float64{"x::sa:a": {15000, 20000}, "y::sa:a": {100000, 107000}}, got)
	assert.Equal(t, []string{"weka_trace: subagent request timestamps read with basis 'relative' (auto heuristic found 2 nested " +
		"request(s) of 4 more than 1 µs before their subagent marker, the first trace 'y' in y.json, subagent 'a': inner request[0]; " +
		"the heuristic is not proof of the producer format: give --weka-nested-timestamp-basis if it is known)"}, notes)
	rel, _ := subagentTimes(t, dir, WekaBasisRelative)
	assert.Equal(t, got, rel)

	d, err := Open(context.Background(), o200k(t), Options{InputFile: dir, WekaBasis: WekaBasisRelative})
	require.NoError(t, err)
	defer d.Close()
	assert.Equal(t, []Timed{{0, 0}, {2, 0}, {1, 15000}, {3, 100000}}, d.Schedule(), "the index is the relative one")
	assert.Equal(t, 6+2, Turns(d))
}

// absolute refuses a call 90 s before its marker, at its line, naming the
// trace, the file, the subagent and the call, as AIPerf does; relative and
// auto read the same file.
func TestWekaBasisAbsoluteRefusesEarlyCall(t *testing.T) {
	dir := writeWeka(t, map[string]string{"bad.json": wekaNested("bad_absolute", 100, 10, 120)})
	path := filepath.Join(dir, "bad.json")
	_, err := Open(context.Background(), o200k(t), Options{InputFile: dir, WekaBasis: WekaBasisAbsolute})
	require.Error(t, err)
	assert.Equal(t, "weka_trace dataset: "+path+":5: requests[1].requests[0].t: trace 'bad_absolute' in bad.json, subagent 'a': "+
		"inner request[0] timestamp 10.0 precedes its marker timestamp 100.0 (--weka-nested-timestamp-basis absolute reads it on the "+
		"root trace's clock: give relative if this producer times a subagent's requests from its marker)", err.Error())
	require.Len(t, lineErrors(err), 1, "request[1] at 120 s is after its marker")

	rel, _ := subagentTimes(t, path, WekaBasisRelative)
	assert.Equal(t, map[string][]float64{"bad_absolute::sa:a": {110000, 220000}}, rel)
	auto, _ := subagentTimes(t, path, "")
	assert.Equal(t, rel, auto)
}

// A call less than 1 µs before its marker is clamped to it (absolute,
// given or auto's), and the note counts it.
func TestWekaBasisClampsSubMicrosecond(t *testing.T) {
	dir := writeWeka(t, map[string]string{"jitter.json": wekaNested("jitter", 100, 99.9999995, 101)})
	for _, basis := range []string{WekaBasisAbsolute, ""} {
		got, notes := subagentTimes(t, dir, basis)
		assert.Equal(t, map[string][]float64{"jitter::sa:a": {100000, 101000}}, got, basis)
		require.Len(t, notes, 1, basis)
		assert.Contains(t, notes[0], "basis 'absolute' (")
		assert.Contains(t, notes[0], "; clamped 1 sub-microsecond pre-marker timestamp(s) to their marker")
	}
	_, notes := subagentTimes(t, dir, WekaBasisAbsolute)
	assert.Contains(t, notes[0], "(basis was explicitly configured)")
	rel, notes := subagentTimes(t, dir, WekaBasisRelative)
	assert.InDeltaSlice(t, []float64{199999.9995, 201000}, rel["jitter::sa:a"], 1e-6)
	assert.Empty(t, notes)
}

// An unknown basis is refused; an explicit one is refused for another
// format (when the plan could not tell it: a detected file), "auto", the
// default, accepted.
func TestWekaBasisRefused(t *testing.T) {
	dir := writeWeka(t, map[string]string{"x.json": wekaNested("x", 5, 10)})
	_, err := Open(context.Background(), o200k(t), Options{InputFile: dir, WekaBasis: "sideways"})
	assert.EqualError(t, err, `weka_trace dataset: unknown weka nested timestamp basis "sideways": expected one of auto, absolute, relative`)

	assert.EqualError(t, Options{WekaBasis: WekaBasisRelative}.refuseWekaBasis(TypeMooncakeTrace),
		"--weka-nested-timestamp-basis relative applies to weka_trace, whose subagents' requests carry their own timestamps; "+
			"mooncake_trace has none: remove it")
	for _, o := range []Options{{WekaBasis: WekaBasisAuto}, {}} {
		assert.NoError(t, o.refuseWekaBasis(TypeMooncakeTrace))
	}
	assert.NoError(t, Options{WekaBasis: WekaBasisAbsolute}.refuseWekaBasis(TypeWekaTrace))
	assert.Nil(t, Notes(nil))
}

// An early call's error is placed at its "t", not at its object's "{", in
// a pretty-printed file.
func TestEarlyCallPlacedAtItsT(t *testing.T) {
	doc := "{\"id\": \"x\", \"models\": [\"m\"], \"block_size\": 64, \"hash_id_scope\": \"local\", \"requests\": [\n" +
		"  {\"type\": \"n\", \"t\": 0, \"model\": \"m\", \"in\": 1, \"out\": 1},\n" +
		"  {\"type\": \"subagent\", \"t\": 100, \"agent_id\": \"a\", \"subagent_type\": \"x\", \"status\": \"done\", \"models\": [\"m\"],\n" +
		"   \"requests\": [{\n     \"type\": \"n\",\n     \"t\" : 10,\n     \"model\": \"m\", \"in\": 1, \"out\": 1}]}]}"
	tr, ps, _ := parseWeka(context.Background(), []byte(doc))
	require.Empty(t, ps)
	aps, _ := absoluteProblems(tr, "x.json")
	require.Len(t, aps, 1)
	assert.Equal(t, strings.Index(doc, `"t" : 10`)+len(`"t" : `), aps[0].off, "at the early call's t value, on its line")
}

// A time that does not fit a number, or is past the schedule's limit, is
// named with its value and the limit.
func TestWekaTimeOutOfRange(t *testing.T) {
	dir := writeWeka(t, map[string]string{"far.json": `{"id": "far", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "requests": [
  {"t": 0, "type": "n", "model": "m", "in": 64, "out": 4, "hash_ids": [1]},
  {"t": 1e400, "type": "n", "model": "m", "in": 64, "out": 4, "hash_ids": [1]},
  {"t": 1e15, "type": "n", "model": "m", "in": 64, "out": 4, "hash_ids": [1]}
]}`})
	_, err := Open(context.Background(), o200k(t), Options{InputFile: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "far.json:3: requests[1].t: expected a number, got 1e400, which does not fit")
	assert.Contains(t, err.Error(), "far.json:4: requests[2].t: expected the request's time in seconds (a number from 0 to 9.007199254740992e+12), got 1e+15")
}
