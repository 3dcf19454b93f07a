package runner_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// framedRun is a result large enough to span many frame lines.
func framedRun(status string) *result.Run {
	r := &result.Run{Status: status, Host: "pod-1", StartTime: time.Unix(1700000000, 0).UTC()}
	for i := range 2000 {
		r.Records = append(r.Records, metrics.Record{Index: i, RequestID: fmt.Sprintf("req-%d-%x", i, uint32(i)*2654435761), Model: "m"})
	}
	return r
}

func frameOf(t *testing.T, r *result.Run) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, runner.WriteFrame(&b, r))
	return b.String()
}

func TestFrameRoundTripsAmongOtherLines(t *testing.T) {
	want := framedRun(result.StatusComplete)
	frame := frameOf(t, want)
	lines := strings.Split(strings.TrimSpace(frame), "\n")
	require.Greater(t, len(lines), 3, "the records span several data lines")
	// Another stream's lines land between the frame's lines, as in a pod log.
	var log strings.Builder
	log.WriteString("INFO starting\n| table | row |\n")
	for i, l := range lines {
		log.WriteString(l + "\r\n")
		if i%2 == 1 {
			log.WriteString("WARN interleaved stderr line\n")
		}
	}
	log.WriteString("Export: profile_export.json\n")

	got, err := runner.ReadFrame(strings.NewReader(log.String()))
	require.NoError(t, err)
	assert.Equal(t, want.Status, got.Status)
	assert.Equal(t, want.Host, got.Host)
	assert.True(t, want.StartTime.Equal(got.StartTime))
	assert.Equal(t, want.Records, got.Records)
}

func TestFrameLastOneWins(t *testing.T) {
	first, second := framedRun(result.StatusFailed), framedRun(result.StatusComplete)
	second.Host = "pod-2"
	got, err := runner.ReadFrame(strings.NewReader(frameOf(t, first) + "noise\n" + frameOf(t, second)))
	require.NoError(t, err)
	assert.Equal(t, "pod-2", got.Host)
}

func TestFrameRefusesDamage(t *testing.T) {
	frame := frameOf(t, framedRun(result.StatusComplete))
	lines := strings.Split(strings.TrimSpace(frame), "\n")

	_, err := runner.ReadFrame(strings.NewReader("just a log\nno result here\n"))
	assert.ErrorIs(t, err, runner.ErrNoFrame)

	_, err = runner.ReadFrame(strings.NewReader(strings.Join(lines[:len(lines)-2], "\n")))
	assert.ErrorContains(t, err, "ends before the result frame's end marker")

	dropped := append(append([]string{}, lines[:2]...), lines[3:]...) // a data line lost
	_, err = runner.ReadFrame(strings.NewReader(strings.Join(dropped, "\n")))
	assert.Error(t, err)

	tampered := strings.Replace(frame, "sha256=", "sha256=00", 1)
	_, err = runner.ReadFrame(strings.NewReader(tampered))
	assert.ErrorContains(t, err, "checksum mismatch")

	_, err = runner.ReadFrame(strings.NewReader(frameOf(t, &result.Run{Status: "weird"})))
	assert.ErrorContains(t, err, `invalid status "weird"`)
}
