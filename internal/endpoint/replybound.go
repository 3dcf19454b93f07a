package endpoint

import (
	"fmt"
	"unsafe"

	"github.com/aiperf-go/aiperf/internal/metrics"
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

// replyTooLarge fails a streamed reply that kept more than maxReply bytes.
func (c *Client) replyTooLarge(res *Response) *metrics.Error {
	return &metrics.Error{Code: res.Status, Type: ErrTypeTooLarge,
		Message: fmt.Sprintf("the streamed reply kept more than %d bytes of text, chunks and raw events: an endless stream? "+
			"(the bound is 16 MiB or --max-event-bytes, the larger, four times that under --export-level raw)", c.maxReply(res))}
}

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
