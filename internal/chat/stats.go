package chat

import (
	"fmt"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Stats is the turn's block of figures, as AIPerf's chat prints it:
//
//	TTFT: 20.06 ms
//	TPS:  154.11 tokens/s (9 tokens in 0.06s)
//	ITL:  6.31 ms/token (decode 158.40 tokens/s)
//	Cache: 14/18 prompt tokens cached (77.8%)
//
// TPS is the output tokens (reasoning included) over the request latency,
// TTFT included; ITL is the decode time over the tokens after the first
// (metrics.Times), left out for a reply of one token. The cache line is
// the server's usage (cached of prompt tokens), left out when the server
// reports no cached tokens; usage that fails the client's checks, or a
// cache count dropped as not a count, is named instead (our addition). A
// reply that was not streamed has no TTFT or ITL.
func (t Turn) Stats() string {
	r := &t.Record
	tt := metrics.Times(r, t.Streamed)
	if tt.OSL == 0 || tt.NoOSL {
		return "(no tokens received)"
	}
	var b strings.Builder
	if tt.Streamed {
		fmt.Fprintf(&b, "TTFT: %.2f ms\n", float64(tt.TTFTNs)/1e6)
	} else {
		b.WriteString("TTFT: n/a (the reply was not streamed)\n")
	}
	secs := float64(tt.LatencyNs) / 1e9
	tokens := fmt.Sprintf("%d tokens", tt.OSL)
	if r.ReasoningTokens > 0 {
		tokens += fmt.Sprintf(", %d reasoning", r.ReasoningTokens)
	}
	tps := 0.0
	if secs > 0 {
		tps = float64(tt.OSL) / secs
	}
	fmt.Fprintf(&b, "TPS:  %.2f tokens/s (%s in %.2fs)\n", tps, tokens, secs)
	if tt.HasITL && tt.ITLNs > 0 {
		fmt.Fprintf(&b, "ITL:  %.2f ms/token (decode %.2f tokens/s)\n", tt.ITLNs/1e6, 1e9/tt.ITLNs)
	}
	b.WriteString(cacheLine(r.Usage))
	return strings.TrimSuffix(b.String(), "\n")
}

// cacheLine is the prompt-cache line of usage u, "" when the server
// reported no cached tokens; a Usage line when its counts failed the
// checks, or the cache count it reported was dropped (not a count, or
// above the prompt tokens).
func cacheLine(u *metrics.Usage) string {
	switch {
	case u == nil:
		return ""
	case !u.Trusted():
		return fmt.Sprintf("Usage: the server's token counts are not trusted: %s\n", u.Untrusted)
	case u.CachedTokens == nil && u.CacheDropped != "":
		return fmt.Sprintf("Usage: the server's cache count is not used: %s\n", u.CacheDropped)
	case u.CachedTokens == nil:
		return ""
	}
	cached, prompt := *u.CachedTokens, u.PromptTokens
	rate := 0.0
	if prompt > 0 {
		rate = 100 * float64(cached) / float64(prompt)
	}
	return fmt.Sprintf("Cache: %d/%d prompt tokens cached (%.1f%%)\n", cached, prompt, rate)
}
