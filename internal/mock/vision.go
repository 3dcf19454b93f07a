package mock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	_ "image/gif"  // images vLLM accepts
	_ "image/jpeg" // (PIL decodes these and more)
	_ "image/png"
	"math"
	"strings"
)

// The mock counts an image's prompt tokens as vLLM does for Qwen2-VL
// (docs/multimodal.md): the image is resized so that both sides are multiples of
// 28 (a 14-pixel patch, merged 2×2) with its pixel count kept within
// [MinImagePixels, MaxImagePixels], and each 28×28 cell is one token.
const (
	ImageFactor    = 28
	MinImagePixels = 56 * 56
	MaxImagePixels = 28 * 28 * 1280
)

// URLImageSide is the side of the square an image given by URL is counted
// as: the mock has no network and does not fetch it.
const URLImageSide = 512

// ImageTokens is the prompt tokens of a w×h image: Qwen2-VL's smart_resize
// (round each side to a multiple of 28, then scale both by one factor into
// the pixel bounds, flooring when shrinking and ceiling when growing), then
// (h'/28)·(w'/28).
func ImageTokens(w, h int) int {
	hb, wb := smartResize(float64(h), float64(w), MinImagePixels, MaxImagePixels)
	return (hb / ImageFactor) * (wb / ImageFactor)
}

// smartResize is smart_resize of Qwen2-VL's image processor. Python's
// round() rounds half to even, as math.RoundToEven does.
func smartResize(h, w float64, minPixels, maxPixels int) (int, int) {
	const f = ImageFactor
	hb := max(f, f*int(math.RoundToEven(h/f)))
	wb := max(f, f*int(math.RoundToEven(w/f)))
	switch {
	case hb*wb > maxPixels:
		beta := math.Sqrt(h * w / float64(maxPixels))
		hb = max(f, f*int(math.Floor(h/beta/f)))
		wb = max(f, f*int(math.Floor(w/beta/f)))
	case hb*wb < minPixels:
		beta := math.Sqrt(float64(minPixels) / (h * w))
		hb = f * int(math.Ceil(h*beta/f))
		wb = f * int(math.Ceil(w*beta/f))
	}
	return hb, wb
}

// contentPart is one OpenAI content part, as far as the mock reads it.
type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	UUID     string `json:"uuid"` // vLLM's multimodal cache id (mmcache.go)
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
	VideoURL *struct {
		URL string `json:"url"`
	} `json:"video_url"`
}

// mediaIDs are a media input's prompt token ids: n ids derived from its
// bytes (its URL when not inline), so that identical inputs share prefix
// cache blocks, as vLLM hashes multimodal inputs into its block hashes.
func mediaIDs(key []byte, n int) []uint32 {
	h := fnv.New64a()
	_, _ = h.Write(key)
	x := h.Sum64()
	ids := make([]uint32, n)
	for i := range ids {
		x += 0x9e3779b97f4a7c15
		z := (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		ids[i] = 1<<30 | uint32(z^(z>>31))&(1<<30-1)
	}
	return ids
}

// partIDs returns the token ids of a non-text content part. A malformed
// data URI or image is an error (vLLM answers 400).
func (s *Server) partIDs(p *contentPart) ([]uint32, error) {
	switch p.Type {
	case "image_url":
		if p.UUID != "" {
			return s.uuidImageIDs(p)
		}
		if p.ImageURL == nil || p.ImageURL.URL == "" {
			return nil, errors.New(`an image_url part needs "image_url": {"url": ...}`)
		}
		return s.imageIDs(p.ImageURL.URL)
	case "input_audio":
		if p.InputAudio == nil || p.InputAudio.Data == "" {
			return nil, errors.New(`an input_audio part needs "input_audio": {"data": ..., "format": ...}`)
		}
		return audioIDs(p.InputAudio.Data, p.InputAudio.Format)
	case "video_url":
		if p.VideoURL == nil || p.VideoURL.URL == "" {
			return nil, errors.New(`a video_url part needs "video_url": {"url": ...}`)
		}
		return videoIDs(p.VideoURL.URL)
	}
	return nil, fmt.Errorf("unknown content part type %q", p.Type)
}

// imageIDs decodes an image_url: a data URI's image is decoded whole (a
// broken one is an error) and counted by ImageTokensFor the served model; a
// URL counts as an URLImageSide square.
func (s *Server) imageIDs(url string) ([]uint32, error) {
	if !strings.HasPrefix(url, "data:") {
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, fmt.Errorf("image_url: expected a data URI or an http(s) URL, got %q", clip(url))
		}
		return mediaIDs([]byte(url), ImageTokensFor(s.cfg.Model, URLImageSide, URLImageSide)), nil
	}
	raw, err := decodeDataURI(url, "image/")
	if err != nil {
		return nil, fmt.Errorf("image_url: %w", err)
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("image_url: invalid image data: %w", err)
	}
	b := img.Bounds()
	return mediaIDs(raw, ImageTokensFor(s.cfg.Model, b.Dx(), b.Dy())), nil
}

// maxImagePixels bounds an image the mock decodes (64 megapixels).
const maxImagePixels = 64 << 20

// decodeDataURI returns the bytes of a base64 data URI whose media type
// starts with prefix. An image's size is checked from its header first.
func decodeDataURI(url, prefix string) ([]byte, error) {
	head, data, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ",")
	if !ok || !strings.HasSuffix(head, ";base64") {
		return nil, fmt.Errorf("invalid data URI %q: expected data:<type>;base64,<data>", clip(url))
	}
	if !strings.HasPrefix(head, prefix) {
		return nil, fmt.Errorf("data URI of type %q: expected %s*", strings.TrimSuffix(head, ";base64"), prefix)
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("invalid base64 data: %w", err)
	}
	if prefix == "image/" {
		cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("invalid image data: %w", err)
		}
		if int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
			return nil, fmt.Errorf("an image of %d×%d pixels: at most %d megapixels", cfg.Width, cfg.Height, maxImagePixels>>20)
		}
	}
	return raw, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// partsSegments appends the segments of a content-parts array: text parts
// as text, media parts as their ids.
func (s *Server) partsSegments(raw json.RawMessage, text func(string), ids func([]uint32)) error {
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return errPromptShape
	}
	for i := range parts {
		p := &parts[i]
		if p.Type == "" || p.Type == "text" {
			text(p.Text)
			continue
		}
		got, err := s.partIDs(p)
		if err != nil {
			return fmt.Errorf("part %d: %w", i, err)
		}
		if len(got) > 0 {
			ids(got)
		}
	}
	return nil
}
