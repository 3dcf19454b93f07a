package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestBodyMediaParts: a chat message with media is sent as AIPerf's
// content parts (text, images, audios, videos), the payloads spliced in
// exactly, and a URL that needs escaping escaped.
func TestBodyMediaParts(t *testing.T) {
	imgs, err := media.Images(context.Background(), media.ImageOptions{WidthMean: 8, HeightMean: 8, Batch: 1}, 1, 2)
	require.NoError(t, err)
	odd := media.PassThrough(media.Image, `https://example.com/a"b\c.png`)
	audio := media.Item{Kind: media.Audio, URL: "data:audio/wav;base64,UklGRg==", Format: "wav"}
	video := media.PassThrough(media.Video, "https://example.com/v.mp4")
	req := Request{EndpointType: plan.EndpointChat, Model: "m", Prompt: "describe " + placeholderMark + "0",
		Media: []media.Item{imgs[0], odd, audio, video, imgs[1]}}
	body, err := Body(req)
	require.NoError(t, err)
	var got struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &got), string(body[:min(200, len(body))]))
	require.Len(t, got.Messages, 1)
	parts := got.Messages[0].Content
	require.Len(t, parts, 6)
	want := []map[string]any{
		{"type": "text", "text": req.Prompt},
		{"type": "image_url", "image_url": map[string]any{"url": imgs[0].URL}},
		{"type": "image_url", "image_url": map[string]any{"url": odd.URL}},
		{"type": "input_audio", "input_audio": map[string]any{"data": "UklGRg==", "format": "wav"}},
		{"type": "video_url", "video_url": map[string]any{"url": video.URL}},
		{"type": "image_url", "image_url": map[string]any{"url": imgs[1].URL}},
	}
	for i, p := range parts {
		var m map[string]any
		require.NoError(t, json.Unmarshal(p, &m))
		assert.Equal(t, want[i], m, "part %d", i)
	}
	assert.False(t, strings.Contains(string(body), placeholderMark+"1"), "every placeholder replaced")

	// History: only the messages with media become parts.
	req = Request{EndpointType: plan.EndpointChat, Model: "m", Messages: []Message{
		{Role: "system", Content: "be brief"}, {Role: "user", Content: "look", Media: imgs[:1]}, {Role: "assistant", Content: "ok"}}}
	body, err = Body(req)
	require.NoError(t, err)
	var hist struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &hist))
	assert.JSONEq(t, `"be brief"`, string(hist.Messages[0].Content))
	assert.Contains(t, string(hist.Messages[1].Content), imgs[0].URL)
	assert.JSONEq(t, `"ok"`, string(hist.Messages[2].Content))
}

// TestBodyImageUUIDs: an image with a vLLM cache id carries it as the
// part's "uuid", AIPerf's wire shape; a cache reference only (URL "")
// is sent as {"url": ""} with its uuid.
func TestBodyImageUUIDs(t *testing.T) {
	img := media.PassThrough(media.Image, "https://example.com/a.png")
	img.UUID = "u-a"
	req := Request{EndpointType: plan.EndpointChat, Model: "m", Prompt: "compare",
		Media: []media.Item{img, {Kind: media.Image, UUID: "u-b"}, media.PassThrough(media.Image, "https://example.com/c.png")}}
	body, err := Body(req)
	require.NoError(t, err)
	var got struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &got), string(body))
	assert.Equal(t, []map[string]any{
		{"type": "text", "text": "compare"},
		{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}, "uuid": "u-a"},
		{"type": "image_url", "image_url": map[string]any{"url": ""}, "uuid": "u-b"},
		{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/c.png"}},
	}, got.Messages[0].Content)
}

// BenchmarkMediaBody is the per-request cost of a chat body carrying
// media (`make bench` runs it, docs/multimodal.md): the body of a 100-word
// prompt text-only, then with one 512×512 and one 1024×1024 noise PNG (1.05
// and 4.2 MB as data URIs), encoded with a placeholder and the image
// spliced in with one copy. Each image case reports x-text-only, its time
// per request over the text-only body's measured in the same run.
func BenchmarkMediaBody(b *testing.B) {
	req := Request{EndpointType: plan.EndpointChat, Model: "m", Prompt: strings.Repeat("word ", 100), Streaming: true, MaxTokens: 100}
	perOp := func(b *testing.B) float64 { return float64(b.Elapsed().Nanoseconds()) / float64(b.N) }
	var textNs float64
	b.Run("text-only", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := Body(req); err != nil {
				b.Fatal(err)
			}
		}
		textNs = perOp(b)
	})
	for _, side := range []float64{512, 1024} {
		imgs, err := media.Images(context.Background(), media.ImageOptions{WidthMean: side, HeightMean: side, Batch: 1}, 1, 1)
		require.NoError(b, err)
		withImage := req
		withImage.Media = imgs
		b.Run(fmt.Sprintf("png-%.0f", side), func(b *testing.B) {
			b.SetBytes(int64(len(imgs[0].URL)))
			b.ReportAllocs()
			for range b.N {
				if _, err := Body(withImage); err != nil {
					b.Fatal(err)
				}
			}
			if textNs > 0 {
				b.ReportMetric(perOp(b)/textNs, "x-text-only")
			}
		})
	}
}

// BenchmarkMediaBodyEncodingJSON is the same body with the image left to
// encoding/json, the cost the splice avoids.
func BenchmarkMediaBodyEncodingJSON(b *testing.B) {
	imgs, err := media.Images(context.Background(), media.ImageOptions{WidthMean: 1024, HeightMean: 1024, Batch: 1}, 1, 1)
	require.NoError(b, err)
	m := map[string]any{"model": "m", "stream": true, "messages": []partMessage{{Role: "user", Content: []any{
		textPart{Type: "text", Text: strings.Repeat("word ", 100)}, imagePart{Type: "image_url", ImageURL: urlValue{URL: imgs[0].URL}}}}}}
	b.SetBytes(int64(len(imgs[0].URL)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encode(m); err != nil {
			b.Fatal(err)
		}
	}
}
