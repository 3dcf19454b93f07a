package runner_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// framedRun is a result large enough to span many frame lines.
func framedRun(status string) *result.Run {
	r := &result.Run{Status: status, Host: "pod-1", StartTime: time.Unix(1700000000, 0).UTC(),
		Config:    plan.Profile{Model: []string{"m"}, URL: []string{"http://127.0.0.1:8000"}},
		Profiling: metrics.Summary{Metrics: []metrics.Metric{{Tag: "request_count", Value: 2000}}}}
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

// rawFrame is a frame of kind as a child would print it, with bytes= as
// given (the payload's size when "").
func rawFrame(kind string, payload []byte, bytesField string) string {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(payload)
	_ = zw.Close()
	if bytesField == "" {
		bytesField = fmt.Sprint(len(payload))
	}
	sum := sha256.Sum256(payload)
	return fmt.Sprintf("AIPERF-%s-BEGIN v1 bytes=%s sha256=%s\nAIPERF-%s-DATA %s\nAIPERF-%s-END\n",
		kind, bytesField, hex.EncodeToString(sum[:]), kind, base64.StdEncoding.EncodeToString(z.Bytes()), kind)
}

// A result frame whose header claims more than MaxFramePayload is refused
// before anything is decompressed: the header does not set the limit.
func TestFrameRefusesAGzipBomb(t *testing.T) {
	bomb := rawFrame("RESULT", bytes.Repeat([]byte{' '}, 1<<20), "8589934592") // 1 MiB of spaces claiming 8 GiB
	_, err := runner.ReadFrame(strings.NewReader(bomb))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "decode result frame: the frame says it holds 8589934592 bytes, over the 256 MiB")

	_, err = runner.ReadFrame(strings.NewReader(rawFrame("RESULT", []byte(`{}`), "-5")))
	assert.ErrorContains(t, err, `bytes="-5" is not a size`)
}

// A result frame must carry what any run carries: a hollow one with a
// valid checksum is not stored as a complete trial.
func TestFrameRefusesAHollowResult(t *testing.T) {
	for name, js := range map[string]string{
		"it names no model":                             `{"status":"complete"}`,
		"it names no URL":                               `{"status":"failed","config":{"model":["m"]}}`,
		"it is complete without a profiling summary":    `{"status":"complete","config":{"model":["m"],"url":["http://h:1"]}}`,
		"it names no model (an interrupted run has it)": `{"status":"interrupted","config":{"url":["http://h:1"]}}`,
	} {
		_, err := runner.ReadFrame(strings.NewReader(rawFrame("RESULT", []byte(js), "")))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "the result frame is not a run's result: "+strings.TrimSuffix(name,
			" (an interrupted run has it)"), name)
	}
	ok := `{"status":"failed","config":{"model":["m"],"url":["http://h:1"]},"error":"endpoint refused"}`
	run, err := runner.ReadFrame(strings.NewReader(rawFrame("RESULT", []byte(ok), "")))
	require.NoError(t, err, "a failed run has no summary to carry")
	assert.Equal(t, "endpoint refused", run.Error)
}
