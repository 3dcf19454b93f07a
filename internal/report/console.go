package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// Title heads the console metrics table.
const Title = "aiperf | LLM Metrics"

// maxMessage caps an error message in the console error summary.
const maxMessage = 160

// Console writes the human summary of run to w: the metrics table (AIPerf's
// console metrics, in its display order) and the tables of AIPerf's other
// console groups (the HTTP trace timing when asked, the server's usage,
// speculative decoding), then the
// server and GPU sections with the GPU power efficiency, the error
// summary, an OSL mismatch warning, control-hook calls, client self-audit
// and benchmark duration, each only when there is something to say.
func Console(w io.Writer, run *result.Run) {
	p := &printer{w: w}
	p.line(Title)
	if why := unprofiled(run); why != "" {
		p.line("No profiling figures: %s.", why)
	} else {
		p.table(statsHeader, metricRows(run.Profiling.InGroup(metrics.GroupDefault)), "lrrrrrrr")
	}
	if spec := run.Config.Spec(); spec.Streams && spec.Tokens && !run.Config.Streaming && unprofiled(run) == "" {
		p.line("No time to first token nor inter-token latency: the replies were not streamed (add --streaming).")
	}
	if unprofiled(run) == "" {
		p.groupTable(run.Profiling, metrics.GroupEffective, EffectiveTitle)
		p.groupTable(run.Profiling, metrics.GroupActive, ActiveTitle)
	}
	p.httpTrace(run)
	p.usage(run.Profiling, run.Audit.Warnings)
	p.specDecode(run.Profiling)
	p.turns(run)
	p.server(run)
	p.power(run.Profiling)
	p.errors(run)
	p.oslMismatch(run.Profiling)
	p.hooks(run)
	p.audit(run)
	if run.Warmup != nil {
		p.warmup(run.Warmup)
	}
	if m, ok := run.Profiling.Get(metrics.TagBenchmarkDuration); ok {
		p.line("Benchmark Duration: %s sec", number(m.Value))
	}
	if run.WasCancelled {
		p.line("Run interrupted: the metrics cover the requests that finished before it stopped.")
	}
	if run.Status == result.StatusFailed && run.Error != "" {
		p.line("Run failed: %s", run.Error)
	}
}

// unprofiled says why run has no profiling figures, "" when it has: a run
// that failed or was interrupted before any profiling request was sent (a
// refused profiler start or KV-cache reset, a Ctrl-C during warmup) has
// only zeros, of phases that never ran, and a server scraped outside them;
// a run whose process exited before it summarised its records (a second
// Ctrl-C, SIGKILL; read back from the store with no end time) has none.
func unprofiled(run *result.Run) string {
	if run.Status != result.StatusFailed && run.Status != result.StatusInterrupted {
		return ""
	}
	if why := Unsummarised(run); why != "" {
		return why
	}
	for _, tag := range []string{metrics.TagRequestCount, metrics.TagErrorRequestCount, metrics.TagCancelledRequestCount} {
		if m, ok := run.Profiling.Get(tag); ok && m.Value > 0 {
			return ""
		}
	}
	if run.Audit.Cut > 0 {
		return ""
	}
	if run.Status == result.StatusInterrupted {
		return "no profiling request was sent: the run was interrupted before its profiling began"
	}
	return "no profiling request was sent: the run failed before its profiling began (see below)"
}

// Unsummarised says that run, read back from the store as interrupted with
// no end time, was never summarised: its process exited first (a second
// Ctrl-C, SIGKILL), leaving only the records it had stored; "" for a run
// that was.
func Unsummarised(run *result.Run) string {
	if run.Status != result.StatusInterrupted || !run.EndTime.IsZero() {
		return ""
	}
	return fmt.Sprintf("the run's process exited before it summarised its records (%d profiling records stored)",
		run.StoredProfiling)
}

// warmup says how many warmup requests were sent (successful, failed and
// cancelled alike), and how many of them failed or were cancelled.
func (p *printer) warmup(w *metrics.Summary) {
	m, ok := w.Get(metrics.TagRequestCount)
	if !ok {
		return
	}
	sent := m.Value
	var notes []string
	for _, c := range []struct{ tag, what string }{
		{metrics.TagErrorRequestCount, "failed"}, {metrics.TagCancelledRequestCount, "cancelled"},
	} {
		if m, ok := w.Get(c.tag); ok && m.Value > 0 {
			sent += m.Value
			notes = append(notes, requests(m.Value)+" "+c.what)
		}
	}
	what := requests(sent) + " requests"
	if len(notes) > 0 {
		what += " (" + strings.Join(notes, ", ") + ")"
	}
	p.line("Warmup: %s, excluded from these metrics", what)
}

// statsHeader heads a console table of metrics.
var statsHeader = []string{"Metric", "avg", "min", "max", "p99", "p90", "p50", "std"}

// metricRows renders metrics as console rows: a distribution's statistics,
// or a single value under avg.
func metricRows(ms []metrics.Metric) [][]string {
	var rows [][]string
	for _, m := range ms {
		name := m.Header + " (" + m.Unit + ")"
		if st := m.Stats; st != nil {
			rows = append(rows, []string{name, number(st.Avg), number(st.Min), number(st.Max),
				number(st.P99), number(st.P90), number(st.P50), number(st.Std)})
			continue
		}
		rows = append(rows, []string{name, number(m.Value), "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"})
	}
	return rows
}

// printer writes console sections separated by blank lines.
type printer struct{ w io.Writer }

// line prints one line, its control characters (a server's words, a
// stored name) escaped, then broken at spaces to fit MaxWidth columns
// unless the writer is Wide.
func (p *printer) line(format string, args ...any) {
	fmt.Fprintln(p.w, Fit(p.w, termsafe.Text(fmt.Sprintf(format, args...))))
}

// section starts a new block of output after a blank line.
func (p *printer) section(title string) {
	fmt.Fprintln(p.w)
	if title != "" {
		p.line("%s", title)
	}
}

func (p *printer) table(header []string, rows [][]string, aligns string) {
	Table(p.w, header, rows, aligns)
}

// Table renders a box table (olekukonko/tablewriter, headers verbatim);
// aligns holds one letter per column, 'l' for left-aligned text, anything
// else for right-aligned values. Control characters in a cell are escaped
// (termsafe.Text) before the columns are measured.
func Table(w io.Writer, header []string, rows [][]string, aligns string) {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < len(aligns) && aligns[i] == 'l' {
			align[i] = tw.AlignLeft
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
	header = escapeCells(header)
	escaped := make([][]string, len(rows))
	for i, r := range rows {
		escaped[i] = escapeCells(r)
	}
	rows = escaped
	if !isWide(w) { // fitted once escaped: the columns are measured as shown
		h, r, fits := fitRows(slices.Clone(header), cloneRows(rows), 3, inWords)
		if !fits { // the last resort: one space between a cell and its border instead of two, words cut, marks moved
			h, r, _ = fitRows(header, rows, 2, marks)
			opts = append(opts, tablewriter.WithPadding(tw.Padding{Left: "", Right: " ", Overwrite: true}))
		}
		header, rows = h, r
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	for _, r := range rows {
		_ = t.Append(r) // rows of strings never fail to convert
	}
	_ = t.Render() // write errors on a console are not actionable
}

// cloneRows copies rows so that fitting them leaves the originals intact.
func cloneRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
	}
	return out
}

// escapeCells is a copy of cells escaped by termsafe.Text.
func escapeCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = termsafe.Text(c)
	}
	return out
}

// errors prints the error summary.
func (p *printer) errors(run *result.Run) {
	if len(run.ErrorSummary) == 0 {
		return
	}
	failed := 0
	for _, e := range run.ErrorSummary {
		failed += e.Count
	}
	total := failed
	if m, ok := run.Profiling.Get(metrics.TagRequestCount); ok {
		total += int(m.Value)
	}
	p.section(fmt.Sprintf("Errors: %d of %d requests failed", failed, total))
	for _, e := range run.ErrorSummary {
		kind := e.Error.Type
		if e.Error.Code != 0 {
			kind += " " + strconv.Itoa(e.Error.Code)
		}
		msg := e.Error.Message
		if len(msg) > maxMessage {
			msg = msg[:maxMessage] + "…"
		}
		p.line("  %d × %s: %s", e.Count, kind, msg)
	}
	if run.Config.FailedRequestThreshold == nil && run.Status == result.StatusComplete && 2*failed >= total {
		p.line("The run still counts as complete (exit 0): --failed-request-threshold RATIO fails a run with more failures (exit 1).")
	}
	if 2*noRoute(run.ErrorSummary) >= total {
		urls := run.Config.RequestURLs()
		p.line("The server does not serve this route or method (HTTP 404, 405 or 501): check that -u is its base URL and "+
			"--endpoint-type (or --endpoint) one it serves, and that it is an inference server, not a plain web server "+
			"(requests went to %s).", strings.Join(urls, ", "))
	}
	if hint := credentialsHint(run.Config, run.ErrorSummary, total); hint != "" {
		p.line("%s", hint)
	}
}

// noRoute counts the failures that say the server does not serve the
// request's route or method (404, 405, 501); a 404 about the model (vLLM's
// and OpenAI's answer to an unknown --model) is not one.
func noRoute(errs []metrics.ErrorCount) int {
	n := 0
	for _, e := range errs {
		c := e.Error.Code
		if c == 404 && strings.Contains(strings.ToLower(e.Error.Message), "model") {
			continue
		}
		if e.Error.Type == "HTTPError" && (c == 404 || c == 405 || c == 501) {
			n += e.Count
		}
	}
	return n
}

// hooks prints every control-plane call.
func (p *printer) hooks(run *result.Run) {
	if len(run.ControlHooks) == 0 {
		return
	}
	p.section("Control hooks")
	rows := make([][]string, 0, len(run.ControlHooks))
	for _, c := range run.ControlHooks {
		status := "-"
		if c.Status != 0 {
			status = strconv.Itoa(c.Status)
		}
		note := "ok"
		switch {
		case c.Error != "":
			note = "error: " + c.Error
		case c.Warning != "":
			note = "warning: " + c.Warning
		case !c.OK:
			note = "failed"
		}
		rows = append(rows, []string{c.Hook, c.Origin, c.Path, status, strconv.Itoa(c.Attempts),
			number(c.DurationMs), note})
	}
	p.table([]string{"Hook", "Origin", "Path", "Status", "Attempts", "Duration (ms)", "Result"}, rows, "lllrrrl")
	if a := run.Audit; a.KVReset != "" && a.KVReset != result.ResetNotCleared { // not cleared is a warning below
		by := ""
		if len(a.KVResetEvidence) > 0 {
			by = " (by " + strings.Join(a.KVResetEvidence, ", ") + ")"
		}
		p.line("KV cache reset %s%s: %s", a.KVReset, by, a.KVResetDetail)
	}
}

// clientLoad is the audit's first line: the load mode, what was asked
// for, the schedule drawn for it (a random schedule of a few requests is
// off its target by chance) and the send rate against that schedule.
func clientLoad(a *result.Audit) string {
	load := fmt.Sprintf("Client: %s mode", a.Mode)
	if a.TargetRate > 0 {
		load += fmt.Sprintf(", target %s req/s", number(a.TargetRate))
	}
	if a.ScheduledRate > 0 {
		load += fmt.Sprintf(", schedule %s req/s, send rate %s req/s (%s%% of the schedule)", number(a.ScheduledRate),
			number(a.AchievedRate), number(100*a.AchievedRate/a.ScheduledRate))
	} else {
		load += fmt.Sprintf(", send rate %s req/s", number(a.AchievedRate))
		if a.TargetRate > 0 { // a run stored before the schedule's rate was kept
			load += fmt.Sprintf(" (%s%% of target)", number(100*a.AchievedRate/a.TargetRate))
		}
	}
	if a.PrecisePacing {
		load += ", precise pacing"
	}
	if a.RxCoalesceUsecs > 0 {
		load += fmt.Sprintf(", receive coalescing %d µs", a.RxCoalesceUsecs)
	}
	return load
}

// audit prints the client's self-audit.
func (p *printer) audit(run *result.Run) {
	a := run.Audit
	if a.Mode == "" {
		return
	}
	p.section("")
	if unprofiled(run) == "" { // else there was no load to describe
		p.line("%s", clientLoad(&a))
		span := "first to last send"
		if a.CapSkipped > 0 {
			span = "over the schedule's span, its skipped sends included"
		}
		p.line("  (send rate: requests started per second, %s;", span)
		p.line("  Request Throughput: successful requests per second of benchmark duration, first send to last response)")
	}
	if a.TokensCountedWith != "" {
		p.line("Tokens counted with %s", a.TokensCountedWith)
	}
	if a.Cut > 0 {
		p.line("Cut: %d requests were cancelled and excluded from the metrics: %s", a.Cut, a.CutWhy())
	}
	if a.SendLagMs != nil {
		p.line("Send lag: p50 %s ms, p99 %s ms, max %s ms", number(a.SendLagMs.P50), number(a.SendLagMs.P99),
			number(a.SendLagMs.Max))
	}
	if h := a.Health; h != nil {
		host := ""
		if h.HostCPUPct != nil {
			host = fmt.Sprintf(", host CPU %s%% busy", number(*h.HostCPUPct))
		}
		p.line("Client health: goroutines waited to run p50 %s ms, p99 %s ms, max %s ms; client CPU %s%% of %d cores%s",
			number(h.SchedLatencyP50Ms), number(h.SchedLatencyP99Ms), number(h.SchedLatencyMaxMs), number(h.ProcessCPUPct), h.Cores, host)
	}
	if len(a.Workers) > 0 {
		var off, rtt int64
		for _, w := range a.Workers {
			off, rtt = max(off, w.ClockOffsetNs, -w.ClockOffsetNs), max(rtt, w.ClockRTTNs)
		}
		p.line("Workers: %d processes (health above: the worst one's); clock offsets within %s ms, measured to a round trip of %s ms at most",
			len(a.Workers), number(float64(off)/1e6), number(float64(rtt)/1e6))
	}
	if a.CapDelayed > 0 {
		p.line("Sends delayed by the in-flight cap: %d", a.CapDelayed)
	}
	if a.CapSkipped > 0 {
		p.line("Sends skipped at a full in-flight cap: %d", a.CapSkipped)
	}
	if a.Retried > 0 {
		p.line("Requests retried on a fresh connection: %d", a.Retried)
	}
	if b := a.Branches; b != nil {
		p.line("DAG branches: %d started, %d completed, %d errored, %d cut by the run's end (%d joins never came); "+
			"joined turns that waited: %d", b.ChildrenSpawned, b.ChildrenCompleted, b.ChildrenErrored, b.ChildrenTruncated,
			b.JoinsSuppressed, b.ParentsSuspended)
	}
	for _, w := range a.Warnings {
		p.line("Warning: %s", w)
	}
	if a.ClientBound {
		p.line("CLIENT-BOUND: the client, not the server, shaped this run's numbers (see the warnings above).")
	}
}

// Number formats v with two decimals and thousands separators, as the
// console tables show values (numfmt.Grouped): a huge value in scientific
// notation, one that is not a finite number as n/a.
func Number(v float64) string { return number(v) }

// number formats v as Number does.
func number(v float64) string { return numfmt.Grouped(v, 2) }

// requests formats a count of requests: its digits, without decimals (a
// huge or non-finite one as number shows it).
func requests(v float64) string {
	if s, ok := numfmt.Whole(v); ok {
		return s
	}
	return number(v)
}
