package hooks

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProfilerMarkLifecycle: the mark exists from before the first start
// POST until the stop was sent, and says where to send the stop.
func TestProfilerMarkLifecycle(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "profiler.json")
	var rec recorder
	var atStart *Mark
	a := rec.serve(t, "a", func(_ int, _ http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start_profile" {
			if m, err := ReadMark(mark); err == nil {
				atStart = &m
			}
		}
	})
	p := New(authHeaders()).Profiler([]string{a.URL}, profilerHook).WithMark(mark)

	require.NoError(t, p.Start(context.Background(), "profiling"))
	require.NotNil(t, atStart, "the mark was written before the start was sent")
	assert.NotZero(t, atStart.StartedAt, "the mark says when the start was sent")
	assert.Equal(t, time.Duration(5*time.Second), atStart.StartDeadline().Sub(time.Unix(0, atStart.StartedAt)),
		"a start may be on its way until its timeout after it was sent")
	two := *atStart
	two.Origins = append(two.Origins, "http://b:1")
	assert.Equal(t, 10*time.Second, two.StartWindow(), "the starts go one after another: a timeout each")
	atStart.StartedAt = 0
	assert.Equal(t, Mark{PID: os.Getpid(), Phase: "profiling", Origins: []string{a.URL}, StopPath: "/stop_profile", TimeoutSeconds: 5}, *atStart)
	b, err := os.ReadFile(mark)
	require.NoError(t, err)
	assert.NotContains(t, string(b), secret, "the mark holds no secret")

	require.NoError(t, p.Stop(context.Background(), "profiling"))
	assert.NoFileExists(t, mark, "removed once the stop was sent")
}

func TestProfilerMarkRemovedAfterRollback(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "profiler.json")
	var rec recorder
	a := rec.serve(t, "a", ok)
	b := rec.serve(t, "b", statuses(500))
	p := New(nil).Profiler([]string{a.URL, b.URL}, profilerHook).WithMark(mark)
	require.Error(t, p.Start(context.Background(), "profiling"))
	assert.NoFileExists(t, mark)
}

// TestStopMarked: the stop sent on behalf of a dead process goes to the
// mark's origins that the caller's profile has (never elsewhere with its
// credentials), each call says why, and the mark is gone afterwards.
func TestStopMarked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := filepath.Join(dir, "profiler.json")
	var rec recorder
	a := rec.serve(t, "a", ok)
	b := rec.serve(t, "b", ok)
	stranger := rec.serve(t, "stranger", ok)
	m := Mark{PID: 1, Phase: "profiling", Origins: []string{a.URL, stranger.URL, b.URL}, StopPath: "/stop_profile", TimeoutSeconds: 5}
	require.NoError(t, m.write(mark))

	c := New(authHeaders())
	calls, err := c.StopMarked(context.Background(), mark, []string{a.URL, b.URL}, profilerHook, "stopped on behalf of a dead trial")
	require.NoError(t, err)
	assert.Equal(t, []string{"a /stop_profile", "b /stop_profile"}, rec.trail())
	require.Len(t, calls, 2)
	for _, call := range calls {
		assert.Equal(t, HookProfilerStop, call.Hook)
		assert.Equal(t, "profiling", call.Phase)
		assert.True(t, call.OK)
		assert.Equal(t, "stopped on behalf of a dead trial", call.Warning)
	}
	assert.NoFileExists(t, mark)

	calls, err = c.StopMarked(context.Background(), mark, []string{a.URL}, profilerHook, "again")
	require.NoError(t, err)
	assert.Empty(t, calls, "no mark: nothing to stop")
	assert.Len(t, rec.all(), 2)

	// A mark cut short still stops every origin of the profile.
	require.NoError(t, os.WriteFile(mark, []byte(`{"pid":`), 0o644))
	calls, err = c.StopMarked(context.Background(), mark, []string{b.URL}, profilerHook, "torn")
	require.NoError(t, err)
	require.Len(t, calls, 1)
	assert.Equal(t, "b /stop_profile", rec.trail()[2])
}
