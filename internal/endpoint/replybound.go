package endpoint

import (
	"fmt"
	"unsafe"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/sse"
)

// replyFloor is the least a streamed reply may keep (its text, its chunks'
// records): 16 MiB, hundreds of thousands of tokens even one per event, so
// that an endless stream fails instead of growing the client's memory
// until the request timeout.
const replyFloor = 16 << 20

// rawFactor is how much more a reply may keep when its raw events are kept
// too (--export-level raw): a vLLM chunk's envelope is 200–300 bytes a
// token, which 16 MiB would cut at about 60,000 tokens.
const rawFactor = 4

// chunkBytes is what keeping one chunk costs besides its text: its record.
const chunkBytes = int(unsafe.Sizeof(Chunk{}))

// maxReply is the bytes res, a streamed reply, may keep: replyFloor, or one
// event's bound (--max-event-bytes) when that is more; rawFactor times that
// when its raw events are kept.
func (c *Client) maxReply(res *Response) int {
	n := max(replyFloor, c.maxResp)
	if res.raw != nil {
		n *= rawFactor
	}
	return n
}

// overBound reports a streamed reply that kept and dropped more than
// maxReply bytes.
func (c *Client) overBound(res *Response) bool { return res.kept+res.dropped > c.maxReply(res) }

// replyTooLarge fails a streamed reply that kept and dropped more than
// maxReply bytes.
func (c *Client) replyTooLarge(res *Response) *metrics.Error {
	return &metrics.Error{Code: res.Status, Type: ErrTypeTooLarge,
		Message: fmt.Sprintf("the streamed reply passed %d bytes of text, chunks and raw events kept and of lines read and dropped "+
			"(%d bytes of comments, events without text, malformed lines): an endless stream? "+
			"(the bound is 16 MiB or --max-event-bytes, the larger, four times that under --export-level raw)", c.maxReply(res), res.dropped)}
}

// eventCost is the bytes of a stream's event charged to its reply while
// the event keeps no text: its name and data, none when its raw event is
// kept (keep counts that).
func (r *Response) eventCost(ev *sse.Event) int {
	if r.raw != nil {
		return 0
	}
	return len(ev.Name) + len(ev.Data)
}

// charge counts a stream's event read as dropped, with the lines the SSE
// reader skipped before it, until refund takes it back for keeping text:
// a stream of comments, chunks without text or malformed lines costs what
// it sends, as one of text does.
func (r *Response) charge(ev *sse.Event) { r.dropped += ev.Skipped + r.eventCost(ev) }

// refund takes back charge's count of an event that kept text (its chunk
// is counted in kept).
func (r *Response) refund(ev *sse.Event) { r.dropped -= r.eventCost(ev) }

// take keeps what a stream's event reports besides its text: its usage
// and speculative-decoding figures (the last ones seen), other choices'
// output.
func (r *Response) take(p *piece) {
	if p.usage != nil {
		r.Usage = p.usage
	}
	if p.spec != nil {
		r.SpecDecode = p.spec
	}
	r.others.add(p)
}
