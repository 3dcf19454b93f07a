package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

func TestConsoleGolden(t *testing.T) {
	tests := []struct {
		name string
		run  func(*testing.T) *result.Run
	}{
		{"console_streaming.golden", fixtureRun},
		{"console_minimal.golden", func(*testing.T) *result.Run { return minimalRun() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			Console(&buf, tc.run(t))
			golden(t, tc.name, buf.Bytes())
		})
	}
}

func TestConsoleContent(t *testing.T) {
	var buf bytes.Buffer
	Console(Wide(&buf), fixtureRun(t))
	out := buf.String()
	for _, want := range []string{
		Title,
		"│ Metric ", " p99 ", " p90 ", " p50 ", // headers not auto-formatted
		"Time to First Token (ms)", "Time to Second Token (ms)", "Inter Token Latency (ms)",
		"Request Latency (ms)", "Output Token Throughput Per User (tokens/sec/user)",
		"Input Sequence Length (tokens)", "Output Sequence Length (tokens)",
		"Output Token Throughput (tokens/sec)", "Request Throughput (requests/sec)",
		"Request Count (requests)", "Error Request Count (requests)", "N/A",
		"Errors: 3 of 7 requests failed", "2 × HTTPError 500: Internal Server Error",
		"reset_kv_cache", "/reset_prefix_cache", "warning: 2xx with", "error: timeout after 30s",
		"target 100.00 req/s, send rate 98.50 req/s", "Send lag: p50 0.25 ms", "CLIENT-BOUND",
		"Warmup: 2 requests", "Benchmark Duration:",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "P 99")
}

// TestConsoleFits120Columns: by default every console line fits a
// 120-column terminal (long metric names wrap inside their cell, prose
// lines at spaces); Wide keeps each name on one line.
func TestConsoleFits120Columns(t *testing.T) {
	run := fixtureRun(t)
	run.Audit.Warnings = append(run.Audit.Warnings, strings.Repeat("a long warning that goes on ", 12))
	run.Audit.TokensCountedWith = "o200k_base (built-in tiktoken encoding)"
	var buf bytes.Buffer
	Console(&buf, run)
	for line := range strings.SplitSeq(buf.String(), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), MaxWidth, "%q", line)
	}
	assert.Contains(t, buf.String(), "Output Token Throughput Per User", "the name is kept, wrapped in its cell")
	assert.Contains(t, buf.String(), "Tokens counted with o200k_base", "the tokenizer is named whatever the --ui")

	buf.Reset()
	Console(Wide(&buf), run)
	assert.Contains(t, buf.String(), "│ Output Token Throughput Per User (tokens/sec/user) ")
	assert.Contains(t, buf.String(), strings.TrimSpace(strings.Repeat("a long warning that goes on ", 12)))
}

func TestConsoleNonStreamingOmitsStreamingRows(t *testing.T) {
	var buf bytes.Buffer
	Console(&buf, minimalRun())
	out := buf.String()
	assert.Contains(t, out, "Request Latency (ms)")
	assert.Contains(t, out, EffectiveTitle, "AIPerf's time-weighted tables, its decode and prefill curves at 0")
	out = out[:strings.Index(out, EffectiveTitle)] + out[strings.Index(out, "\nClient:"):]
	for _, absent := range []string{"Time to First Token", "Inter Token Latency", "Per User", "Errors:", "Control hooks", "CLIENT-BOUND"} {
		assert.NotContains(t, out, absent)
	}
}

func TestNumber(t *testing.T) {
	tests := map[float64]string{
		0: "0.00", 1.005: "1.00", 12.345: "12.35", 999.999: "1,000.00", 1234567.891: "1,234,567.89",
		-4321.5: "-4,321.50", 100: "100.00", 1e300: "1.00e+300", -6e20: "-6.00e+20", math.Inf(1): "n/a",
	}
	for in, want := range tests {
		assert.Equal(t, want, number(in), "%v", in)
	}
}

func TestConsoleReportsCutRequestsAndNamesTheSendRate(t *testing.T) {
	run := minimalRun()
	run.Audit.Cut, run.Audit.CutGracePeriod, run.Audit.CutInterrupt = 4, 3, 1
	var buf bytes.Buffer
	Console(Wide(&buf), run)
	out := buf.String()
	assert.Contains(t, out, "Cut: 4 requests were cancelled and excluded from the metrics: 3 still in flight at the end of the "+
		"grace period, 1 in flight when the run was interrupted")
	assert.Contains(t, out, "send rate 1.32 req/s")
	assert.Contains(t, out, "Request Throughput: successful requests per second of benchmark duration")
	assert.NotContains(t, out, "achieved", "the send rate is not called achieved throughput")
}

func TestConsoleShowsTTFTByTurnForSessions(t *testing.T) {
	run := fixtureRun(t)
	var buf bytes.Buffer
	Console(&buf, run)
	assert.NotContains(t, buf.String(), "by turn", "single-turn runs have no per-turn table")

	for i := range run.Records {
		run.Records[i].Turn = run.Records[i].Index % 2
	}
	buf.Reset()
	Console(&buf, run)
	out := buf.String()
	assert.Contains(t, out, "Time to First Token by turn (ms)")
	assert.Regexp(t, `│ 0 +│ +2 │`, out, "two successful first turns")
	assert.Regexp(t, `│ 1 +│ +2 │`, out)
}

// TestTableTightensPaddingLast: a table of unbreakable cells too wide with
// the usual padding loses a space per cell before it may exceed 120
// columns; Wide keeps the padding.
func TestTableTightensPaddingLast(t *testing.T) {
	header := strings.Split("aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhh iiiiiiiii jjjjjjjjj", " ")
	rows := [][]string{strings.Split("123456789 123456789 123456789 123456789 123456789 123456789 123456789 123456789 123456789 123456789", " ")}
	var buf bytes.Buffer
	Table(&buf, header, rows, "")
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), MaxWidth, "%q", line)
	}
	assert.Contains(t, buf.String(), "│aaaaaaaaa │")
	buf.Reset()
	Table(Wide(&buf), header, rows, "")
	assert.Contains(t, buf.String(), "│ aaaaaaaaa │")
}

// TestTableCutsLongWords: a cell with a word longer than the table's room
// (a local model path's 40-character snapshot hash, a 300-character name)
// kept the table wider than 120 columns (139 and 480 in runs list): the
// word is cut inside its cell once its breaks at separators are not
// enough, and only as far as the table needs; numbers are never cut.
func TestTableCutsLongWords(t *testing.T) {
	header := []string{"id", "started", "sweep/cell/trial", "name", "model", "url", "load", "status", "req/s",
		"ttft p99 (ms)", "latency p99 (ms)", "errors"}
	for _, model := range []string{
		"/models/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f249a16976918f6564b8830bc894c89659",
		strings.Repeat("x", 300),
	} {
		row := []string{"1", "2026-12-04 18:57:28", "-", "-", model, "http://127.0.0.1:22201", "concurrency 1", "complete",
			"1,234,567.89", "1.00e+300", "36.08", "0"}
		var buf bytes.Buffer
		Table(&buf, header, [][]string{row}, "rrllllllrrrr")
		out := buf.String()
		cells, body := "", false
		for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), MaxWidth, "%q", line)
			body = body || strings.HasPrefix(line, "├")
			if f := strings.Split(line, "│"); body && len(f) > 5 {
				cells += strings.TrimSpace(f[5])
			}
		}
		assert.Equal(t, model, cells, "the model whole, over the lines of its cell")
		assert.Contains(t, out, "1,234,567.89")
		assert.Contains(t, out, "1.00e+300")
		assert.Contains(t, out, "2026-12-04", "cut only where needed")
		assert.Contains(t, out, "concurrency")

		buf.Reset()
		Table(Wide(&buf), header, [][]string{row}, "rrllllllrrrr")
		assert.Contains(t, buf.String(), model, "Wide: whole")
	}
}

// TestConsoleNamesTheThresholdWhenMostFailed: a run most of whose requests
// failed is still complete, and the console says how to make it fail.
func TestConsoleNamesTheThresholdWhenMostFailed(t *testing.T) {
	run := fixtureRun(t)
	run.Status = result.StatusComplete
	run.ErrorSummary[0].Count = 40
	var buf bytes.Buffer
	Console(Wide(&buf), run)
	assert.Contains(t, buf.String(), "--failed-request-threshold RATIO fails a run with more failures (exit 1)")
	run.Config.FailedRequestThreshold = plan.Ptr(0.5)
	buf.Reset()
	Console(Wide(&buf), run)
	assert.NotContains(t, buf.String(), "--failed-request-threshold")
}

// TestConsoleHintsAtAWrongRoute: a run whose requests mostly got 404, 405
// or 501 (a URL or endpoint the server does not serve) says where they
// went and what to check; other failures do not.
func TestConsoleHintsAtAWrongRoute(t *testing.T) {
	run := fixtureRun(t)
	run.Config.URL, run.Config.EndpointType = []string{"http://127.0.0.1:8000"}, plan.EndpointChat
	run.ErrorSummary[0].Count = 40
	run.ErrorSummary[0].Error = metrics.Error{Code: 501, Type: "HTTPError", Message: "Error response"}
	var buf bytes.Buffer
	Console(Wide(&buf), run)
	assert.Contains(t, buf.String(), "The server does not serve this route or method (HTTP 404, 405 or 501): check that -u "+
		"is its base URL and --endpoint-type (or --endpoint) one it serves, and that it is an inference server, not a plain "+
		"web server (requests went to http://127.0.0.1:8000/v1/chat/completions).")
	for _, e := range []metrics.Error{{Code: 500, Type: "HTTPError"}, {Code: 404, Type: "HTTPError", Message: "The model `x` does not exist."}} {
		run.ErrorSummary[0].Error = e
		buf.Reset()
		Console(Wide(&buf), run)
		assert.NotContains(t, buf.String(), "does not serve this route", "%d %s", e.Code, e.Message)
	}
}

// TestClientLoadJudgesTheSendRateByTheSchedule: a random schedule of a few
// requests is off its target by chance, so the send rate is put beside the
// schedule drawn, not the target alone; a run stored without the
// schedule's rate keeps the old line.
func TestClientLoadJudgesTheSendRateByTheSchedule(t *testing.T) {
	a := result.Audit{Mode: "rate", TargetRate: 20, ScheduledRate: 17.16, AchievedRate: 17.1}
	assert.Equal(t, "Client: rate mode, target 20.00 req/s, schedule 17.16 req/s, send rate 17.10 req/s (99.65% of the schedule)",
		clientLoad(&a))
	a.ScheduledRate = 0
	assert.Equal(t, "Client: rate mode, target 20.00 req/s, send rate 17.10 req/s (85.50% of target)", clientLoad(&a))
	fixed := result.Audit{Mode: "fixed", ScheduledRate: 4, AchievedRate: 4, PrecisePacing: true}
	assert.Equal(t, "Client: fixed mode, schedule 4.00 req/s, send rate 4.00 req/s (100.00% of the schedule), precise pacing",
		clientLoad(&fixed))
}

// TestTableMovesBestMarksLast: a sweep table of two scenario parameters and
// nine metric columns whose "± 0.0080 *" cells could not break printed 122
// columns (examples/trace_replay.star's, in compare and sweep); a best-cell
// mark takes a line of its own below its value where nothing else fits,
// every mark kept, no value nor '±' split.
func TestTableMovesBestMarksLast(t *testing.T) {
	header := []string{"cell", "warmup_request_count", "concurrency", "trials", "TTFT avg (ms)", "TTFT p99 (ms)",
		"ITL avg (ms)", "latency p99 (ms)", "output tok/s", "req/s", "errors", "prefix cache hit %", "pareto"}
	rows := [][]string{
		{"cold", "", "", "3", "21.89 ± 0.12", "27.87 ± 0.69", "2.00 ± 0.0090", "152.60 ± 0.67", "1090.97 ± 2.85",
			"23.55 ± 0.062", "0.00 ± 0.00", "78.42 ± 0.00", ""},
		{"warm", "48", "4", "3", "10.82 ± 0.37 *", "13.19 ± 3.11 *", "2.00 ± 0.0080 *", "138.91 ± 0.69 *",
			"1096.35 ± 1.17 *", "23.66 ± 0.025 *", "0.00 ± 0.00", "99.71 ± 0.00", "yes"},
	}
	var buf bytes.Buffer
	Table(&buf, header, rows, "lrrrrrrrrrrrl")
	out := buf.String()
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), MaxWidth, "%q", line)
	}
	assert.Equal(t, 6, strings.Count(out, "*"), "every mark kept")
	for _, v := range []string{"± 0.0090", "± 0.0080", "± 0.025", "1096.35", "± 0.062"} {
		assert.Contains(t, out, v)
	}

	buf.Reset()
	Table(Wide(&buf), header, rows, "lrrrrrrrrrrrl")
	assert.Contains(t, buf.String(), "± 0.0080 *", "Wide: the mark beside its value")
}
