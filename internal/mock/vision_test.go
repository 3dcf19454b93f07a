package mock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImageTokens pins the Qwen2-VL formula on sizes worked by hand
// (docs/multimodal.md): round each side to a multiple of 28, scale into
// [56², 28²·1280] pixels, one token per 28×28 cell.
func TestImageTokens(t *testing.T) {
	for _, c := range []struct{ w, h, want int }{
		{512, 512, 18 * 18},   // 512/28 = 18.29 → 504
		{1024, 1024, 35 * 35}, // 1036² > max: β = 1.0222, ⌊1001.7/28⌋ = 35
		{640, 480, 23 * 17},   // 22.86 → 23 (644), 17.14 → 17 (476)
		{28, 28, 2 * 2},       // below 56²: grown to 56×56
		{1, 1, 2 * 2},         // rounds to 28, then grown to 56×56
		{42, 42, 2 * 2},       // 1.5 rounds half to even: 2 (56)
		{70, 70, 2 * 2},       // 2.5 rounds half to even: 2 (56)
		{98, 98, 4 * 4},       // 3.5 rounds half to even: 4 (112)
		{1920, 1080, 47 * 26}, // 2,073,600 px > max: β = 1.4375, ⌊1335.7/28⌋ = 47, ⌊751.3/28⌋ = 26
	} {
		assert.Equal(t, c.want, ImageTokens(c.w, c.h), "%d×%d", c.w, c.h)
	}
}

func pngURI(t *testing.T, w, h int) string {
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))))
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func imageChat(text, url string) map[string]any {
	return map[string]any{"model": "m", "max_tokens": 1, "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": text},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}},
	}}}}
}

// TestImagePromptTokens: an image part adds its tokens to
// usage.prompt_tokens; the same image again is a prefix-cache hit.
func TestImagePromptTokens(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	text := "Describe the picture in a few words, please."
	var plain, with struct {
		Usage usage `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(readAll(t, post(t, base+"/v1/chat/completions", imageChat(text, pngURI(t, 1, 1))))), &plain))
	uri := pngURI(t, 512, 512)
	resp := post(t, base+"/v1/chat/completions", imageChat(text, uri))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.Unmarshal([]byte(readAll(t, resp)), &with))
	assert.Equal(t, 324-4, with.Usage.PromptTokens-plain.Usage.PromptTokens, "512² is 324 tokens, 1² is 4")
	var again struct {
		Usage usage `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(readAll(t, post(t, base+"/v1/chat/completions", imageChat(text, uri)))), &again))
	assert.Equal(t, with.Usage.PromptTokens, again.Usage.PromptTokens)
	require.NotNil(t, again.Usage.PromptDetails)
	assert.Greater(t, again.Usage.PromptDetails.CachedTokens, 300, "the image's blocks are cached")
}

// TestMalformedImage: a data URI that is not base64, not an image or a
// truncated image is a 400 naming the part, as on vLLM.
func TestMalformedImage(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	good := pngURI(t, 64, 64)
	for name, c := range map[string]struct{ url, want string }{
		"not base64":     {"data:image/png;base64,@@@", "invalid base64"},
		"not an image":   {"data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello")), "invalid image data"},
		"truncated":      {good[:len(good)-40], "image"},
		"not base64 uri": {"data:image/png,abc", "expected data:<type>;base64"},
		"audio type":     {"data:audio/wav;base64,AAAA", "expected image/"},
		"no scheme":      {"file:///etc/passwd", "expected a data URI or an http(s) URL"},
	} {
		t.Run(name, func(t *testing.T) {
			resp := post(t, base+"/v1/chat/completions", imageChat("hi", c.url))
			body := readAll(t, resp)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
			assert.Contains(t, body, "messages[0].content: part 1: image_url")
			assert.Contains(t, body, c.want)
		})
	}
}

// TestImageUUIDCache: as vLLM, an image part's uuid keys the image: sent
// with its image it counts the image and caches the count; sent alone
// ({"url": ""} or no image_url) it is served from the cache, the same
// tokens (a prefix-cache hit), or is a 400 when the cache does not hold it.
func TestImageUUIDCache(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	chat := func(url any, uuid string) *http.Response {
		part := map[string]any{"type": "image_url", "uuid": uuid}
		if url != nil {
			part["image_url"] = map[string]any{"url": url}
		}
		return post(t, base+"/v1/chat/completions", map[string]any{"model": "m", "max_tokens": 1, "messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "what is this"}, part}}}})
	}
	tokens := func(resp *http.Response) usage {
		body := readAll(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		var r struct {
			Usage usage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &r))
		return r.Usage
	}
	resp := chat("", "img-1")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, readAll(t, resp), `uuid \"img-1\" is not in the multimodal cache`)

	first := tokens(chat(pngURI(t, 512, 512), "img-1"))
	for _, url := range []any{"", nil} {
		again := tokens(chat(url, "img-1"))
		assert.Equal(t, first.PromptTokens, again.PromptTokens, "the cached image's 324 tokens")
		require.NotNil(t, again.PromptDetails)
		assert.Greater(t, again.PromptDetails.CachedTokens, 300, "its blocks hash by the uuid: a prefix-cache hit")
	}
	other := tokens(chat(pngURI(t, 512, 512), "img-2"))
	assert.Equal(t, first.PromptTokens, other.PromptTokens)
	if other.PromptDetails != nil {
		assert.Less(t, other.PromptDetails.CachedTokens, 300, "another uuid is another image, whatever its bytes")
	}
}

// TestMMCacheEvicts: the cache holds the last MMCacheItems uuids.
func TestMMCacheEvicts(t *testing.T) {
	var c mmCache
	for i := range MMCacheItems + 1 {
		c.put(fmt.Sprint(i), i)
		if i == 1 {
			_, _ = c.get("0") // used again: the first out is "1"
		}
	}
	_, ok := c.get("1")
	assert.False(t, ok)
	n, ok := c.get("0")
	assert.True(t, ok)
	assert.Equal(t, 0, n)
	n, _ = c.get(fmt.Sprint(MMCacheItems))
	assert.Equal(t, MMCacheItems, n)
}

// TestLLaVAImageTokens: serving a LLaVA-1.5 model, the mock counts every
// image as vLLM does for it, 576 tokens whatever its size; any other
// model keeps Qwen2-VL's count.
func TestLLaVAImageTokens(t *testing.T) {
	_, base := start(t, Config{Fast: true, Model: "llava-hf/llava-1.5-7b-hf"})
	text := "Describe the picture in a few words, please."
	promptTokens := func(body map[string]any) int {
		resp := post(t, base+"/v1/chat/completions", body)
		raw := readAll(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, raw)
		var r struct {
			Usage usage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(raw), &r))
		return r.Usage.PromptTokens
	}
	plain := promptTokens(map[string]any{"model": "m", "max_tokens": 1, "messages": []any{map[string]any{"role": "user", "content": text}}})
	for _, side := range []int{1, 512, 1024} {
		assert.Equal(t, LLaVA15ImageTokens, promptTokens(imageChat(text, pngURI(t, side, side)))-plain, "%d²", side)
	}
	assert.Equal(t, 576, LLaVA15ImageTokens)
	assert.Equal(t, 576, ImageTokensFor("LLaVA-HF/LLaVA-1.5-13B-hf", 2000, 10))
	assert.Equal(t, ImageTokens(640, 480), ImageTokensFor("Qwen/Qwen2-VL-2B-Instruct", 640, 480))
}
