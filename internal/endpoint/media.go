package endpoint

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/media"
)

// A message with media is sent as OpenAI content parts, AIPerf's order:
// its text, then its images, audios and videos:
//
//	{"type": "text", "text": ...}
//	{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}
//	{"type": "image_url", "image_url": {"url": ""}, "uuid": "..."}  (a vLLM cache reference)
//	{"type": "input_audio", "input_audio": {"data": "<base64>", "format": "wav"}}
//	{"type": "video_url", "video_url": {"url": "data:video/webm;base64,..."}}
//
// A media payload is megabytes that encoding/json would scan byte by byte
// on every request, so the body is encoded with a short placeholder string
// in its place and the payload is spliced in afterwards: a copy.

// parts are the media items of a body being built, in placeholder order.
type parts struct{ items []media.Item }

// placeholderMark starts every placeholder; the random part keeps a
// prompt's text from being taken for one.
var placeholderMark = func() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "aiperf-media-" + hex.EncodeToString(b) + "-"
}()

// partMessage is a chat message whose content is a list of parts.
type partMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type urlValue struct {
	URL string `json:"url"`
}

// imagePart's UUID is vLLM's multimodal cache id (an input file's
// image_uuids); with it, URL may be "" (a cache reference only).
type imagePart struct {
	Type     string   `json:"type"`
	ImageURL urlValue `json:"image_url"`
	UUID     string   `json:"uuid,omitempty"`
}

type videoPart struct {
	Type     string   `json:"type"`
	VideoURL urlValue `json:"video_url"`
}

type audioValue struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type audioPart struct {
	Type       string     `json:"type"`
	InputAudio audioValue `json:"input_audio"`
}

// withParts returns msgs as they are when none carries media, else with
// each such message's content as parts, collecting their items.
func (req *Request) withParts(msgs []Message) any {
	n := 0
	for i := range msgs {
		n += len(msgs[i].Media)
	}
	if n == 0 {
		return msgs
	}
	if req.parts == nil {
		req.parts = &parts{items: make([]media.Item, 0, n)}
	}
	out := make([]any, len(msgs))
	for i, m := range msgs {
		if len(m.Media) == 0 {
			out[i] = m
			continue
		}
		content := make([]any, 0, 1+len(m.Media))
		if m.Content != "" {
			content = append(content, textPart{Type: "text", Text: m.Content})
		}
		for _, it := range m.Media {
			content = append(content, req.parts.part(it))
		}
		out[i] = partMessage{Role: m.Role, Content: content}
	}
	return out
}

// mark is the placeholder of item, spliced into the body later.
func (ps *parts) mark(it media.Item) string {
	mark := placeholderMark + strconv.Itoa(len(ps.items))
	ps.items = append(ps.items, it)
	return mark
}

// part is item's content part, its payload a placeholder.
func (ps *parts) part(it media.Item) any {
	mark := ps.mark(it)
	switch it.Kind {
	case media.Audio:
		return audioPart{Type: "input_audio", InputAudio: audioValue{Data: mark, Format: it.Format}}
	case media.Video:
		return videoPart{Type: "video_url", VideoURL: urlValue{URL: mark}}
	}
	return imagePart{Type: "image_url", ImageURL: urlValue{URL: mark}, UUID: it.UUID}
}

// payload is the JSON string of item i as it is spliced in: an audio's
// base64 data, else its URL.
func (ps *parts) payload(i int) []byte {
	it := ps.items[i]
	s := it.URL
	if it.Kind == media.Audio {
		s = it.Data()
	}
	if !it.JSONPlain() {
		b, _ := json.Marshal(s) // a string always encodes
		return b
	}
	return nil
}

// splice replaces every placeholder of body with its item's payload, in
// one copy.
func (ps *parts) splice(body []byte) ([]byte, error) {
	quoted := []byte(`"` + placeholderMark)
	size := len(body)
	for _, it := range ps.items {
		size += len(it.URL) + 2
	}
	out := make([]byte, 0, size)
	rest := body
	for range ps.items {
		at := bytes.Index(rest, quoted)
		if at < 0 {
			return nil, fmt.Errorf("encode request body: a media placeholder is missing")
		}
		out = append(out, rest[:at]...)
		rest = rest[at+len(quoted):]
		end := bytes.IndexByte(rest, '"')
		i, err := strconv.Atoi(string(rest[:max(end, 0)]))
		if end < 0 || err != nil || i < 0 || i >= len(ps.items) {
			return nil, fmt.Errorf("encode request body: a malformed media placeholder")
		}
		rest = rest[end+1:]
		if b := ps.payload(i); b != nil {
			out = append(out, b...)
			continue
		}
		out = append(out, '"')
		if it := ps.items[i]; it.Kind == media.Audio {
			out = append(out, it.Data()...)
		} else {
			out = append(out, it.URL...)
		}
		out = append(out, '"')
	}
	return append(out, rest...), nil
}
