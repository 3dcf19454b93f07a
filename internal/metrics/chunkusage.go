package metrics

import "fmt"

// DecodeTokens is the divisor of a streamed request's inter_token_latency
// for an OSL of at least 2: the output tokens after its first content
// chunk. As AIPerf's, that is OSL − the first content chunk's server count
// under --per-chunk-usage (Usage.FirstChunkTokens), else OSL − 1; a count
// that is not positive or leaves no token after the first chunk is not
// used (OSL − 1 then, and ChunkUsageWarning names the request). Our
// extension: the count is used only when the record's usage is trusted,
// as the OSL is then the server's count too (TakeServerCounts).
func DecodeTokens(r *Record, osl int) int {
	if n, ok := firstChunkTokens(r, osl); ok {
		return osl - n
	}
	return osl - 1
}

// firstChunkTokens is the record's first content chunk count and whether
// it can divide the ITL of a reply of osl tokens.
func firstChunkTokens(r *Record, osl int) (int, bool) {
	u := r.Usage
	if u == nil || u.FirstChunkTokens == nil || !u.Trusted() {
		return 0, false
	}
	n := *u.FirstChunkTokens
	return n, n > 0 && osl-n >= 1
}

// ChunkUsageWarning words, for a --per-chunk-usage run, the requests with
// an inter_token_latency that could not use their first content chunk's
// count (DecodeTokens) and divided by OSL − 1 instead: how many, and why
// for the first of them; "" when every one could.
func ChunkUsageWarning(records []Record, streaming bool) string {
	n, of, first := 0, 0, ""
	for i := range records {
		r := &records[i]
		if !r.OK() || r.NoTokens {
			continue
		}
		t := Times(r, streaming)
		if !t.HasITL {
			continue
		}
		of++
		if _, ok := firstChunkTokens(r, t.OSL); !ok {
			if n++; n == 1 {
				first = fmt.Sprintf("request %d: %s", r.Index, chunkProblem(r, t.OSL))
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("--per-chunk-usage: the inter_token_latency of %d of %d requests divides by OSL - 1, not by "+
		"the tokens after the first content chunk, as the server's count of that chunk was not usable (the first, %s); "+
		"check that the server reports usage on every chunk (stream_options.continuous_usage_stats)", n, of, first)
}

// chunkProblem says why a record's first content chunk count cannot
// divide its ITL (firstChunkTokens).
func chunkProblem(r *Record, osl int) string {
	switch u := r.Usage; {
	case u == nil:
		return "the reply had no usage"
	case u.FirstChunkTokens == nil:
		return "no response carried both generated text and usage"
	case !u.Trusted():
		return "its usage is not trusted: " + u.Untrusted
	}
	return fmt.Sprintf("%d tokens in the first content chunk of a %d-token reply", *r.Usage.FirstChunkTokens, osl)
}
