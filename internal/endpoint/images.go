package endpoint

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// imageGenBody is image_generation's body, AIPerf's: the prompt, the
// model, response_format b64_json and n 1 (extras merged over them).
func imageGenBody(req *Request) map[string]any {
	m := make(map[string]any, 4+len(req.Extra)+len(req.TurnExtra))
	m["prompt"] = req.Prompt
	m["model"] = req.Model
	m["response_format"] = "b64_json"
	m["n"] = 1
	return m
}

// imageEditReserved are the image_edit fields the endpoint manages: an
// --extra-inputs or record extra of that name is ignored, as in AIPerf.
var imageEditReserved = []string{"prompt", "image", "url", "mask"}

// imageEditBody is image_edit's body, AIPerf's: a JSON object of the
// prompt, model, response_format b64_json, n 1 and the extras, and the
// turn's first image as the "image" formFile (or, given by URL, as
// SGLang's "url" field). The client sends it as multipart/form-data
// (formBody); inputs.json shows it as it is.
func imageEditBody(req *Request) ([]byte, error) {
	var ref *media.Item
	for i := range req.Media {
		if req.Media[i].Kind == media.Image {
			ref = &req.Media[i]
			break
		}
	}
	if ref == nil {
		return nil, errors.New("build request body: image_edit needs a reference image, and this turn has none")
	}
	fields := map[string]any{"prompt": req.Prompt, "model": req.Model, "response_format": "b64_json", "n": 1}
	for _, extra := range []map[string]any{req.Extra, req.TurnExtra} {
		for k, v := range extra {
			if !slices.Contains(imageEditReserved, k) {
				fields[k] = v
			}
		}
	}
	if strings.HasPrefix(ref.URL, "data:") {
		fields["image"] = imageFile(ref)
	} else {
		fields["url"] = ref.URL
	}
	return encode(fields)
}

// imageFile is the reference image of a data URI as the "image" file:
// image.<type> (jpg for jpeg) with the URI's type.
func imageFile(ref *media.Item) formFile {
	head, _, _ := strings.Cut(ref.URL, ";")
	mime := strings.TrimPrefix(head, "data:")
	ext := strings.TrimPrefix(mime, "image/")
	if ext == "jpeg" {
		ext = "jpg"
	}
	return formFile{B64Data: ref.Data(), Filename: "image." + ext, ContentType: mime}
}

// imagesFormat reads an image generation or edit reply: OpenAI's (and
// SGLang's) {"data": [{"b64_json" | "url"}]} or NIM's {"artifacts":
// [{"base64"}]}; at least one image must have come back, and each base64
// image must be valid base64 of an image (imageHeader).
type imagesFormat struct {
	n int // the images asked for ("n"); -1 when not known (a payload sent as it is, an n that is not a count)
}

// askedImages is the "n" a generation or edit request sends: 1, or an
// --extra-inputs or turn's n; -1 when not known.
func askedImages(req *Request) int {
	if len(req.Payload) > 0 {
		return -1
	}
	n := 1
	for _, extra := range []map[string]any{req.Extra, req.TurnExtra} {
		v, ok := extra["n"]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case float64:
			n = int(x)
			if float64(n) != x {
				return -1
			}
		case int:
			n = x
		case json.Number:
			i, err := x.Int64()
			if err != nil {
				return -1
			}
			n = int(i)
		case string:
			i, err := strconv.Atoi(x)
			if err != nil {
				return -1
			}
			n = i
		default:
			return -1
		}
	}
	if n < 1 {
		return -1
	}
	return n
}

func (imagesFormat) label() string { return "images" }

func (imagesFormat) stream() streamDecoder { return nonStreaming{} }

func (f imagesFormat) whole(b []byte, status int) (piece, string) {
	var v struct {
		Data []struct {
			B64JSON string `json:"b64_json"`
			URL     string `json:"url"`
		} `json:"data"`
		Artifacts []struct {
			Base64 string `json:"base64"`
		} `json:"artifacts"`
		Usage *imagesUsage `json:"usage"`
	}
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	if why := decodeObject(b, &v); why != "" {
		return piece{}, why
	}
	n := 0
	for i, d := range v.Data {
		if d.B64JSON == "" && d.URL == "" {
			return piece{}, fmt.Sprintf("data[%d] has neither b64_json nor url", i)
		}
		if d.B64JSON != "" {
			if why := imageHeader(d.B64JSON); why != "" {
				return piece{}, fmt.Sprintf("data[%d].b64_json %s", i, why)
			}
		}
		n++
	}
	for i, a := range v.Artifacts {
		if a.Base64 == "" {
			return piece{}, fmt.Sprintf("artifacts[%d] has no base64 image", i)
		}
		if why := imageHeader(a.Base64); why != "" {
			return piece{}, fmt.Sprintf("artifacts[%d].base64 %s", i, why)
		}
		n++
	}
	if n == 0 {
		return piece{}, "no image came back (no data nor artifacts)"
	}
	if f.n > 0 && n > f.n {
		return piece{}, fmt.Sprintf("%d images came back, more than the %d asked for (n)", n, f.n)
	}
	p := piece{images: n}
	if v.Usage != nil {
		p.usage = v.Usage.metrics()
	}
	return p, ""
}

// imagesUsage is an images reply's usage: OpenAI's Images API
// (gpt-image-1) counts input_tokens and output_tokens, the Responses API's
// names, other servers chat's prompt_tokens and completion_tokens.
type imagesUsage struct {
	wireUsage
	InputTokens  usageCount `json:"input_tokens"`
	OutputTokens usageCount `json:"output_tokens"`
}

// metrics converts the usage, its output count 0 when absent (as
// promptUsage's): by input_tokens and output_tokens when it has either
// and neither of chat's names, its problems naming them.
func (u *imagesUsage) metrics() *metrics.Usage {
	if u.PromptTokens.Set || u.CompletionTokens.Set || !u.InputTokens.Set && !u.OutputTokens.Set {
		return promptUsage(&u.wireUsage)
	}
	w := u.wireUsage
	w.PromptTokens, w.CompletionTokens = u.InputTokens, u.OutputTokens
	if !w.CompletionTokens.Set {
		w.CompletionTokens = usageCount{Set: true}
	}
	return w.named(metrics.InputOutputNames)
}

// imageMagics are the first bytes of the image formats a generation reply
// may carry.
var imageMagics = []struct {
	name  string
	at    int
	magic string
}{
	{"PNG", 0, "\x89PNG\r\n\x1a\n"},
	{"JPEG", 0, "\xff\xd8\xff"},
	{"GIF", 0, "GIF87a"},
	{"GIF", 0, "GIF89a"},
	{"WebP", 8, "WEBP"}, // after "RIFF" and the size
}

// imageHeader says why s is not a base64 image, "" when it is: valid
// (standard, padded) base64 whose bytes start with a PNG, JPEG, GIF or
// WebP header. The image itself is not decoded, nor its base64 kept: it
// is streamed through a small buffer, its cost bounded by its length.
func imageHeader(s string) string {
	dec := base64.NewDecoder(base64.StdEncoding, strings.NewReader(s))
	var head [12]byte
	n, err := io.ReadFull(dec, head[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "is not valid base64"
	}
	if _, err := io.Copy(io.Discard, dec); err != nil {
		return "is not valid base64"
	}
	for _, m := range imageMagics {
		if n >= m.at+len(m.magic) && string(head[m.at:m.at+len(m.magic)]) == m.magic &&
			(m.name != "WebP" || string(head[:4]) == "RIFF") {
			return ""
		}
	}
	return fmt.Sprintf("is not an image: no PNG, JPEG, GIF or WebP header in its first %d decoded byte(s)", n)
}
