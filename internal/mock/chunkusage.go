package mock

import "strconv"

// maxFirstChunkTokens bounds --first-chunk-tokens (a reply's length, at
// most the default context).
const maxFirstChunkTokens = defaultMaxModelLen

// firstChunk is how many output tokens g's first content chunk carries:
// --first-chunk-tokens, as a server that streams several tokens at a time
// (TRT-LLM's stream_interval) bundles them, at most the reply's tokens and,
// for a reasoning reply, at most its reasoning tokens (a chunk holds one
// kind of text). One on the wires of the other APIs (Responses, Messages,
// TGI), which carry a token per event.
func (s *Server) firstChunk(ep endpoint, g *generation) int {
	n := max(s.cfg.FirstChunkTokens, 1)
	if ep.wire != nil {
		return 1
	}
	n = min(n, g.tokens)
	if g.reasoning > 0 {
		n = min(n, g.reasoning)
	}
	return n
}

// chunkEnd is the end (exclusive) of the output tokens of the streamed
// chunk that starts with token k: the first chunk carries g.first tokens,
// every later one a single token.
func (g *generation) chunkEnd(k int) int {
	if k == 0 {
		return max(g.first, 1)
	}
	return k + 1
}

// closeChunk ends a chunk whose choices array b has just closed: under
// continuous_usage_stats (with include_usage) the chunk carries the
// request's cumulative usage so far, as vLLM's do: prompt_tokens,
// completion_tokens (the tokens sent, this chunk's included: 0 on the role
// chunk) and total_tokens; without it, nothing.
func (c *chunker) closeChunk(b []byte, g *generation, sent int) []byte {
	if c.continuous {
		prompt := g.usage.PromptTokens
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(prompt), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(sent), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(prompt+sent), 10)
		b = append(b, '}')
	}
	return append(b, "}\n\n"...)
}
