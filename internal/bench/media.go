package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// checkMedia refuses an input file whose records name media when the
// endpoint type sends none: they would be dropped without a word.
func checkMedia(p plan.Profile, ds dataset.Dataset) error {
	if p.EndpointType != plan.EndpointChat && dataset.HasImageUUIDs(ds) {
		return fmt.Errorf("%s gives image_uuids (vLLM cache ids), and --endpoint-type %s cannot send them: use chat (nothing was sent)", p.InputFile, p.EndpointType)
	}
	if plan.SendsMedia(p.EndpointType) || !dataset.HasMedia(ds) {
		return nil
	}
	return fmt.Errorf("%s names images, audios or videos, and --endpoint-type %s sends none: use chat (nothing was sent)", p.InputFile, p.EndpointType)
}

// checkAudio refuses, before any traffic, an input file an audio
// transcription cannot be sent from: every turn uploads its first audio,
// so each must have one (the readers refuse an audio given by URL), unless
// it is a payload sent as written (an inputs.json's, its audio a "file"
// part). Every conversation is looked at (one pass over the input, only
// for audio_transcription).
func checkAudio(ctx context.Context, p plan.Profile, ds dataset.Dataset) error {
	if p.EndpointType != plan.EndpointAudioTranscription || p.InputFile == "" {
		return nil
	}
	return eachConversation(ctx, ds, func(c *dataset.Conversation) error {
		for k := range c.Turns {
			if len(c.Turns[k].Payload) == 0 && !slices.ContainsFunc(c.Turns[k].Media, func(m media.Item) bool { return m.Kind == media.Audio }) {
				return fmt.Errorf("%s: conversation %s, turn %d has no audio, and --endpoint-type audio_transcription uploads one "+
					"a request: give each record an audio (nothing was sent)", p.InputFile, c.ID, k)
			}
		}
		return nil
	})
}

// mediaStats is what a request with media carried (its image parts, every
// turn's; its audio inputs' duration), the server's video figures and the
// body's size; nil for a request with neither media nor a video job.
func mediaStats(req *endpoint.Request, resp *endpoint.Response) *metrics.MediaStats {
	var m metrics.MediaStats
	count := func(items []media.Item) {
		for _, it := range items {
			switch it.Kind {
			case media.Image:
				m.Images++
			case media.Audio:
				m.AudioSeconds += it.Seconds
			}
		}
	}
	count(req.Media)
	for i := range req.Messages {
		count(req.Messages[i].Media)
	}
	if v := resp.Video; v != nil {
		m.VideoInferenceS, m.VideoPeakMemoryMB, m.VideoUntrusted = v.InferenceS, v.PeakMemoryMB, v.Untrusted
	}
	if m == (metrics.MediaStats{}) && !hasMedia(req) {
		return nil
	}
	m.PayloadBytes = resp.SentBytes
	return &m
}

// hasMedia reports whether a request carries media.
func hasMedia(req *endpoint.Request) bool {
	if len(req.Media) > 0 {
		return true
	}
	for i := range req.Messages {
		if len(req.Messages[i].Media) > 0 {
			return true
		}
	}
	return false
}
