package mock

import (
	"fmt"
	"math"
	"strings"

	"github.com/aiperf-go/aiperf/internal/media"
)

// Qwen2-VL's video sampling (qwen_vl_utils, docs/multimodal.md): frames at 2
// a second, an even number between 4 and 768, each resized by
// smart_resize within the video bounds, and each pair of frames merged
// (temporal patch 2).
const (
	videoFPS       = 2.0
	videoMinFrames = 4
	videoMaxFrames = 768
	VideoMinPixels = 128 * 28 * 28
	VideoMaxPixels = 768 * 28 * 28
)

// VideoTokens is the prompt tokens of a w×h video of the given duration:
// (frames/2)·(h'/28)·(w'/28), with frames = 2 a second rounded to an even
// number in [4, 768] and (w', h') smart_resize's within
// [VideoMinPixels, VideoMaxPixels].
func VideoTokens(w, h int, seconds float64) int {
	frames := 2 * int(math.RoundToEven(seconds*videoFPS/2))
	frames = min(videoMaxFrames, max(videoMinFrames, frames))
	hb, wb := smartResize(float64(h), float64(w), VideoMinPixels, VideoMaxPixels)
	return frames / 2 * (hb / ImageFactor) * (wb / ImageFactor)
}

// videoIDs reads a video_url: a data URI's container header (an MP4 or
// WebM; a broken one is an error) gives its size and duration; a URL is
// not fetched and counts as a 5 s URLImageSide square.
func videoIDs(url string) ([]uint32, error) {
	if !strings.HasPrefix(url, "data:") {
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, fmt.Errorf("video_url: expected a data URI or an http(s) URL, got %q", clip(url))
		}
		return mediaIDs([]byte(url), VideoTokens(URLImageSide, URLImageSide, 5)), nil
	}
	raw, err := decodeDataURI(url, "video/")
	if err != nil {
		return nil, fmt.Errorf("video_url: %w", err)
	}
	info, err := media.ProbeVideo(raw)
	if err != nil {
		return nil, fmt.Errorf("video_url: invalid video data: %w", err)
	}
	return mediaIDs(raw, VideoTokens(info.Width, info.Height, info.Seconds)), nil
}
