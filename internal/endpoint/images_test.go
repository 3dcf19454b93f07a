package endpoint

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestImageEditBody: image_edit's multipart body carries AIPerf's fields,
// the extras but not the reserved names, and the reference image's bytes
// as the "image" file; a URL reference is SGLang's "url" field.
func TestImageEditBody(t *testing.T) {
	imgs, err := media.Images(context.Background(), media.ImageOptions{WidthMean: 8, HeightMean: 8, Batch: 1, Format: media.FormatJPEG}, 1, 1)
	require.NoError(t, err)
	req := Request{EndpointType: plan.EndpointImageEdit, Model: "flux", Prompt: "snow", Media: imgs,
		Extra: map[string]any{"size": "512x512", "guidance_scale": 1.5, "prompt": "ignored"}, TurnExtra: map[string]any{"num_inference_steps": 4.0}}
	body, err := Body(req)
	require.NoError(t, err)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(body, &payload))
	assert.Equal(t, map[string]any{"b64_data": imgs[0].Data(), "filename": "image.jpg", "content_type": "image/jpeg"}, payload["image"],
		"the image as AIPerf's payload holds it")
	fields, parts, files := formParts(t, body)
	assert.Equal(t, map[string]string{"prompt": "snow", "model": "flux", "response_format": "b64_json", "n": "1",
		"size": "512x512", "guidance_scale": "1.5", "num_inference_steps": "4"}, fields)
	require.Contains(t, parts, "image")
	assert.Equal(t, "image.jpg", parts["image"].FileName())
	assert.Equal(t, "image/jpeg", parts["image"].Header.Get("Content-Type"))
	assert.Equal(t, mustDecode(t, imgs[0].Data()), files["image"])

	req.Media = []media.Item{media.PassThrough(media.Image, "https://example.com/ref.png")}
	body, err = Body(req)
	require.NoError(t, err)
	fields, parts, _ = formParts(t, body)
	assert.Equal(t, "https://example.com/ref.png", fields["url"])
	assert.Empty(t, parts)
	req.Media = nil
	_, err = Body(req)
	assert.ErrorContains(t, err, "image_edit needs a reference image")
}

// mustDecode is standard base64 s decoded.
func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

// TestImagesFormat: a reply is valid only when an image came back (OpenAI
// data or NIM artifacts).
func TestImagesFormat(t *testing.T) {
	for body, want := range map[string]string{
		`{"data": [{"b64_json": "iVBORw0KGgo="}]}`:                               "",
		`{"data": [{"url": "https://x/y.png"}, {"b64_json": "/9j/4A=="}]}`:       "",
		`{"artifacts": [{"base64": "iVBORw0KGgo=", "finishReason": "SUCCESS"}]}`: "",
		`{"artifacts": [{"base64": "AA"}]}`:                                      "artifacts[0].base64 is not valid base64",
		`{"data": []}`:                                                           "no image came back",
		`{"data": [{"revised_prompt": "x"}]}`:                                    "data[0] has neither b64_json nor url",
		`{"artifacts": [{}]}`:                                                    "artifacts[0] has no base64 image",
		`[1]`:                                                                    "not a JSON object",
	} {
		p, why := imagesFormat{}.whole([]byte(body), 200)
		assert.Contains(t, why, want, body)
		if want == "" {
			assert.Empty(t, why, body)
			assert.Positive(t, p.images)
		}
	}
}

// TestImagesUsage: OpenAI's Images API (gpt-image-1) counts input_tokens
// and output_tokens, read as the prompt and completion counts, its
// problems naming them; chat's names are read as before, a missing
// completion count as 0.
func TestImagesUsage(t *testing.T) {
	usage := func(u string) *metrics.Usage {
		t.Helper()
		p, why := imagesFormat{}.whole([]byte(`{"data": [{"b64_json": "iVBORw0KGgo="}], "usage": `+u+`}`), 200)
		require.Empty(t, why)
		require.NotNil(t, p.usage)
		return p.usage
	}
	total := 100
	assert.Equal(t, &metrics.Usage{PromptTokens: 50, CompletionTokens: 50, TotalTokens: &total, Names: metrics.InputOutputNames},
		usage(`{"total_tokens": 100, "input_tokens": 50, "output_tokens": 50, "input_tokens_details": {"text_tokens": 10, "image_tokens": 40}}`))
	assert.Equal(t, &metrics.Usage{PromptTokens: 7, Names: metrics.InputOutputNames}, usage(`{"input_tokens": 7}`))
	assert.Equal(t, "input_tokens is negative (-5)", usage(`{"input_tokens": -5, "output_tokens": 3}`).Untrusted)
	assert.Equal(t, "input_tokens is missing", usage(`{"output_tokens": 3}`).Untrusted)
	assert.Equal(t, &metrics.Usage{PromptTokens: 9}, usage(`{"prompt_tokens": 9}`))
	assert.Equal(t, "prompt_tokens is missing", usage(`{"total_tokens": 9}`).Untrusted)
}
