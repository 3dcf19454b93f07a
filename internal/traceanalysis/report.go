package traceanalysis

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aiperf-go/aiperf/internal/cachesim"
	"github.com/aiperf-go/aiperf/internal/report"
)

// Report is AIPerf's AnalysisStats, with its JSON keys, and the KV-cache
// simulation when one was asked for (an extension AIPerf's model ignores).
type Report struct {
	TotalRequests   int `json:"total_requests"`
	UniquePrefixes  int `json:"unique_prefixes"`
	NumPrefixGroups int `json:"num_prefix_groups"`
	// CacheHitRate is the mean per-request hit rate with an infinite cache.
	CacheHitRate float64 `json:"cache_hit_rate"`
	MinISL       int     `json:"min_isl"`
	MaxISL       int     `json:"max_isl"`
	AvgISL       float64 `json:"avg_isl"`
	MinOSL       int     `json:"min_osl"`
	MaxOSL       int     `json:"max_osl"`
	AvgOSL       float64 `json:"avg_osl"`
	// PrefixReuseRatio is the share of prefix occurrences whose prefix
	// occurs more than once.
	PrefixReuseRatio float64          `json:"prefix_reuse_ratio"`
	ISLStats         *MetricStats     `json:"isl_stats"`
	OSLStats         *MetricStats     `json:"osl_stats"`
	ContextStats     *MetricStats     `json:"context_length_stats"`
	UniqueStats      *MetricStats     `json:"unique_prompt_length_stats"`
	HitRateStats     *MetricStats     `json:"hit_rate_stats"`
	Simulation       *cachesim.Result `json:"kv_cache_simulation,omitempty"`
}

// MetricStats is AIPerf's summary of one distribution: population
// standard deviation, numpy's linearly interpolated percentiles.
type MetricStats struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"std_dev"`
	Min    float64 `json:"min"`
	P25    float64 `json:"p25"`
	Median float64 `json:"median"`
	P75    float64 `json:"p75"`
	Max    float64 `json:"max"`
}

// WriteJSON writes r as AIPerf writes its analysis file (indented by 2).
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Print writes AIPerf's console report: the counts, then the table of
// distributions; then the simulation's figures when there is one.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Trace Analysis Report")
	fmt.Fprintf(w, "Total requests:      %s\n", integer(r.TotalRequests))
	fmt.Fprintf(w, "Unique prefixes:     %s\n", integer(r.UniquePrefixes))
	fmt.Fprintf(w, "Prefix groups:       %s\n", integer(r.NumPrefixGroups))
	fmt.Fprintf(w, "Cache hit rate:      %s\n", percent(r.CacheHitRate))
	fmt.Fprintf(w, "Prefix reuse ratio:  %s\n", percent(r.PrefixReuseRatio))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Trace Statistics")
	rows := [][]string{}
	for _, m := range []struct {
		name string
		s    *MetricStats
	}{{"Input Length", r.ISLStats}, {"Context Length", r.ContextStats}, {"Unique Prompt Length", r.UniqueStats},
		{"Output Length", r.OSLStats}, {"Theoretical Hit Rates", r.HitRateStats}} {
		rows = append(rows, append([]string{m.name}, m.s.values()...))
	}
	report.Table(w, []string{"Metric", "Mean", "Std Dev", "Min", "P25", "Median", "P75", "Max"}, rows, "")
	if s := r.Simulation; s != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "KV-Cache Simulation (LRU, the mock server's cache model)")
		fmt.Fprintf(w, "KV cache:            %s (%s of %s)\n", counted(s.CapacityTokens, "token"), counted(s.CapacityBlocks, "block"), counted(s.CacheBlockSize, "token"))
		fmt.Fprintf(w, "Request duration:    TTFT %g ms + ITL %g ms per output token after the first\n", s.TTFTms, s.ITLms)
		fmt.Fprintf(w, "Prefix-cache hits:   %s of %s prompt tokens\n", integer(int(s.HitTokens)), integer(int(s.PromptTokens)))
		fmt.Fprintf(w, "Hit ratio:           %s\n", percent(s.HitRatio))
		fmt.Fprintf(w, "Requests with hits:  %s of %s\n", integer(s.RequestsWithHits), integer(s.Requests))
		fmt.Fprintf(w, "Blocks evicted:      %s (peak %s cached)\n", integer(int(s.BlocksEvicted)), counted(s.PeakBlocks, "block"))
		if s.LaterTurns > 0 {
			fmt.Fprintf(w, "Session turns:       %s: each re-sends its conversation so far (earlier prompts and the mock's replies), counted in the prompt tokens\n",
				plural(s.LaterTurns, "request is a later turn of a session", "requests are later turns of a session"))
		}
	}
	fmt.Fprintln(w)
}

// values are the seven columns of s, or N/A for a distribution without
// values.
func (s *MetricStats) values() []string {
	if s == nil {
		return []string{"N/A", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"}
	}
	out := make([]string, 0, 7)
	for _, v := range []float64{s.Mean, s.StdDev, s.Min, s.P25, s.Median, s.P75, s.Max} {
		out = append(out, report.Number(v))
	}
	return out
}

// integer formats n with thousands separators.
func integer(n int) string { return strings.TrimSuffix(report.Number(float64(n)), ".00") }

// counted is n with thousands separators and noun, plural unless n is 1.
func counted(n int, noun string) string { return plural(n, noun, noun+"s") }

// plural is n with thousands separators and one, or many unless n is 1.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return integer(n) + " " + many
}

// percent formats a ratio as Python's {:.2%}.
func percent(r float64) string { return fmt.Sprintf("%.2f%%", 100*r) }
