package plan

import "fmt"

// perChunkUsage checks --per-chunk-usage: it asks a streamed chat reply for
// usage on every chunk (stream_options.continuous_usage_stats) and
// subtracts the first content chunk's server count from the server's
// output count, so, as AIPerf's, it requires --use-server-token-count,
// --streaming and the chat endpoint type; and --extra-inputs must not turn
// streaming off for every request (there would be no chunk to count).
func (v *validator) perChunkUsage(p *Profile) {
	if !p.PerChunkUsage {
		return
	}
	const field = "per_chunk_usage"
	if !p.UseServerTokenCount {
		v.add(field, "requires --use-server-token-count (the inter-token latency subtracts the server's count of the "+
			"first content chunk from the server's output count): add --use-server-token-count, or remove it")
	}
	if !p.Streaming {
		v.add(field, "requires --streaming (it asks for usage on every streamed chunk): add --streaming, or remove it")
	}
	if p.EndpointType != EndpointChat {
		v.add(field, fmt.Sprintf("requires endpoint type 'chat', not --endpoint-type %s "+
			"(stream_options.continuous_usage_stats is a chat completions option): use --endpoint-type chat, or remove it",
			p.EndpointType))
	}
	if s, ok := p.Extras()["stream"]; ok && s != true {
		v.add(field, fmt.Sprintf("has no chunk to count: --extra-inputs stream:%v asks every request not to stream; "+
			"remove one of them", s))
	}
}
