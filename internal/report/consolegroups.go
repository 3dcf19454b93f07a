package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/result"
)

// Titles of the console tables beside the main one, after AIPerf's.
const (
	UsageTitle      = Title + ": Usage"
	EffectiveTitle  = Title + ": Effective"
	ActiveTitle     = Title + ": Active"
	SpecDecodeTitle = "aiperf | Spec Decode"
	PowerTitle      = "GPU Power Efficiency (NVIDIA)"
	OSLTitle        = "Output Sequence Length Mismatch Warning"
	HTTPTraceTitle  = "aiperf | HTTP Trace Timing"
)

// CacheReportingHint is AIPerf's note for a server that reports usage but
// no prompt-cache reads: its prefix caching may be on and unreported.
const CacheReportingHint = "Token usage is reported but no prompt-cache read tokens were seen " +
	"(usage.prompt_tokens_details.cached_tokens absent). If your server uses prefix/KV caching, enable cache " +
	"reporting to fill the prompt-cache metrics: vLLM --enable-prompt-tokens-details, SGLang --enable-cache-report " +
	"(TensorRT-LLM reports it by default)."

// usage prints AIPerf's "LLM Metrics: Usage" table (the server's token
// counts, its prompt cache's included), and the cache-reporting hint when
// the server reported usage but no cache reads. A server that reported
// cache reads that cannot be true, dropped, is not told to report them:
// the run's warnings (result.WarnCacheDropped) say what it sent instead.
func (p *printer) usage(s metrics.Summary, warnings []string) {
	if !p.groupTable(s, metrics.GroupUsage, UsageTitle) {
		return
	}
	_, prompt := s.Get(metrics.TagUsagePromptTokens)
	_, cached := s.Get(metrics.TagUsageCacheReadTokens)
	dropped := slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, result.WarnCacheDropped) })
	if prompt && !cached && !dropped {
		p.line("Note: %s", CacheReportingHint)
	}
}

// groupTable prints the table of a console group's metrics under title,
// reporting whether s had any.
func (p *printer) groupTable(s metrics.Summary, g metrics.Group, title string) bool {
	rows := s.InGroup(g)
	if len(rows) == 0 {
		return false
	}
	p.section(title)
	p.table(statsHeader, metricRows(rows), "lrrrrrrr")
	return true
}

// histogramBuckets is how many accepted-draft counts the console shows
// one by one (0 to 7); the rest fold into a last ">=8" bucket, as AIPerf's.
const histogramBuckets = 8

// specDecode prints the speculative-decoding table and the pooled
// accepted-draft histogram (% of verify steps per accepted draft count).
func (p *printer) specDecode(s metrics.Summary) {
	if !p.groupTable(s, metrics.GroupSpecDecode, SpecDecodeTitle) {
		return
	}
	if line := histogramLine(s.SpecDecodeHistogram); line != "" {
		p.line("  Accepted drafts per step (%% of steps): %s", line)
	}
}

// histogramLine renders a pooled histogram as "0: 25%   1: 18%   …", from
// 0 to the largest count seen, those of 8 and more together.
func histogramLine(h map[string]int) string {
	counts := make([]int, histogramBuckets+1)
	total, top := 0, -1
	for k, n := range h {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || n <= 0 {
			continue
		}
		i = min(i, histogramBuckets)
		counts[i] += n
		total += n
		top = max(top, i)
	}
	var parts []string
	for i := 0; i <= top; i++ {
		label := strconv.Itoa(i)
		if i == histogramBuckets {
			label = ">=" + label
		}
		parts = append(parts, fmt.Sprintf("%s: %.0f%%", label, 100*float64(counts[i])/float64(total)))
	}
	return strings.Join(parts, "   ")
}

// power prints AIPerf's "GPU Power Efficiency (NVIDIA)" section: each
// metric's single value.
func (p *printer) power(s metrics.Summary) {
	ms := s.InGroup(metrics.GroupPowerNVIDIA)
	if len(ms) == 0 {
		return
	}
	rows := make([][]string, len(ms))
	for i, m := range ms {
		rows[i] = []string{m.Header + " (" + m.Unit + ")", number(m.Value)}
	}
	p.section(PowerTitle)
	p.table([]string{"Metric", "avg"}, rows, "lr")
}

// oslMismatch warns, as AIPerf's end-of-run panel, when requests' output
// lengths missed the max_tokens they asked for by more than the threshold.
func (p *printer) oslMismatch(s metrics.Summary) {
	m, ok := s.Get(metrics.TagOSLMismatchCount)
	if !ok || !(m.Value > 0) || math.IsInf(m.Value, 0) { // a count read back as ±Inf or NaN says nothing
		return
	}
	total := 0.0
	if c, ok := s.Get(metrics.TagRequestCount); ok {
		total = c.Value
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return
	}
	avg, short, long := "N/A", true, false
	if d, ok := s.Get(metrics.TagOSLMismatchDiffPct); ok && d.Stats != nil {
		if avg = numfmt.Text(d.Stats.Avg, 1); avg != numfmt.NA {
			avg += "%"
		}
		short, long = d.Stats.Min < 0, d.Stats.Max > 0
	}
	p.section(OSLTitle)
	p.line("%s of %s requests (%.1f%%) have an output length differing from the requested one by more than the threshold.",
		requests(m.Value), requests(total), 100*m.Value/total)
	p.line("Threshold (tokens): min(requested × %g%%, %g); average mismatch: %s", metrics.OSLMismatchPct,
		metrics.OSLMismatchMaxTokens, avg)
	if short {
		p.line("Why, for outputs too short: the server stopped (an EOS token) before the requested output length.")
		p.line("Fix: --extra-inputs ignore_eos:true (vLLM, TensorRT-LLM), --extra-inputs min_tokens:N (vLLM, TensorRT-LLM, SGLang).")
	}
	if long {
		p.line("Why, for outputs too long: the server did not apply the requested cap.")
		p.line("Fix: --use-legacy-max-tokens (chat: the cap sent as max_tokens, for servers that ignore max_completion_tokens), " +
			"or --extra-inputs with the cap field the server reads.")
	}
	p.line("Either way: --use-server-token-count if the tokenizers disagree; per-request values: osl_mismatch_diff_pct in profile_export.jsonl.")
}

// httpTrace prints AIPerf's HTTP Trace Timing table when the run was asked
// for it (--show-trace-timing): k6's phases of the HTTP exchange.
func (p *printer) httpTrace(run *result.Run) {
	if run.Config.ShowTraceTiming {
		p.groupTable(run.Profiling, metrics.GroupHTTPTrace, HTTPTraceTitle)
	}
}
