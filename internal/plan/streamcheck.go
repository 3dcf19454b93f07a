package plan

import "fmt"

// streamCompletion checks --require-stream-completion: AIPerf's strict
// check of a streamed chat reply, so it needs --streaming and the chat
// endpoint type, and --extra-inputs must not turn streaming off for every
// request (the check would then have nothing to check).
func (v *validator) streamCompletion(p *Profile) {
	v.perChunkUsage(p)
	if !p.RequireStreamCompletion {
		return
	}
	const field = "require_stream_completion"
	if p.EndpointType != EndpointChat {
		v.add(field, fmt.Sprintf("checks streamed chat replies only, not --endpoint-type %s: "+
			"use --endpoint-type chat --streaming, or remove it", p.EndpointType))
	}
	if !p.Streaming {
		v.add(field, "checks streamed replies only: add --streaming, or remove it")
	}
	if s, ok := p.Extras()["stream"]; ok && s != true {
		v.add(field, fmt.Sprintf("has nothing to check: --extra-inputs stream:%v asks every request not to stream; "+
			"remove one of them", s))
	}
}
