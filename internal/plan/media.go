package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aiperf-go/aiperf/internal/media"
)

// Images is the profile's Image Input options.
func (p *Profile) Images() media.ImageOptions {
	batch := 1
	if p.ImageBatchSize != nil {
		batch = *p.ImageBatchSize
	}
	return media.ImageOptions{WidthMean: p.ImageWidthMean, WidthStddev: p.ImageWidthStddev,
		HeightMean: p.ImageHeightMean, HeightStddev: p.ImageHeightStddev, Batch: batch,
		Format: p.ImageFormat, Source: p.ImageSource, Sampling: p.ImageSourceSampling}
}

// Audios is the profile's Audio Input options.
func (p *Profile) Audios() media.AudioOptions {
	batch := 1
	if p.AudioBatchSize != nil {
		batch = *p.AudioBatchSize
	}
	return media.AudioOptions{LengthMean: p.AudioLengthMean, LengthStddev: p.AudioLengthStddev, Batch: batch,
		Format: p.AudioFormat, Depths: p.AudioDepths, SampleRatesKHz: p.AudioSampleRates, Channels: p.AudioNumChannels}
}

// Videos is the profile's Video Input options.
func (p *Profile) Videos() media.VideoOptions {
	o := media.VideoOptions{Width: p.VideoWidth, Height: p.VideoHeight, Batch: 1, Seconds: 5, FPS: 4,
		Synth: p.VideoSynthType, Format: p.VideoFormat, Codec: p.VideoCodec, AudioChannels: p.VideoAudioNumChannels,
		AudioCodec: p.VideoAudioCodec, AudioDepth: p.VideoAudioDepth}
	if p.VideoBatchSize != nil {
		o.Batch = *p.VideoBatchSize
	}
	if p.VideoDuration != nil {
		o.Seconds = *p.VideoDuration
	}
	if p.VideoFPS != nil {
		o.FPS = *p.VideoFPS
	}
	if p.VideoAudioSampleRate != nil {
		o.AudioRateHz = *p.VideoAudioSampleRate
	}
	return o
}

// mediaEndpoints are the endpoint types whose requests carry images,
// audios and videos (content parts of a chat message).
// (image_edit: its reference image; audio_transcription: its audio).
var mediaEndpoints = map[string]bool{EndpointChat: true, EndpointImageEdit: true, EndpointImageRetrieval: true,
	EndpointAudioTranscription: true}

// SendsMedia reports whether requests of the endpoint type carry media.
func SendsMedia(endpointType string) bool { return mediaEndpoints[endpointType] }

// media checks the Image and Audio Input options: valid values, and an
// endpoint type that sends media.
func (v *validator) media(p *Profile) {
	img, aud, vid := p.Images(), p.Audios(), p.Videos()
	for _, x := range []float64{img.WidthMean, img.WidthStddev, img.HeightMean, img.HeightStddev, aud.LengthMean, aud.LengthStddev,
		vid.Seconds, vid.AudioRateHz} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return // allFinite said so
		}
	}
	for _, err := range []error{img.Validate(), aud.Validate(), vid.Validate()} {
		if err == nil {
			continue
		}
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var fe *media.FlagError
			if errors.As(e, &fe) {
				v.add(strings.ReplaceAll(fe.Flag, "-", "_"), fe.Msg)
			} else {
				v.add("image_source", e.Error())
			}
		}
	}
	if p.UUIDAndStrip && p.InputFile == "" {
		v.add("uuid_and_strip", "strips the repeated images of an input file's sessions (single_turn records with image_uuids): give --input-file, or remove it")
	}
	if p.UUIDAndStrip && p.EndpointType != EndpointChat {
		v.add("uuid_and_strip", fmt.Sprintf("applies to --endpoint-type chat (vLLM's image cache ids ride in chat content parts), not %s: remove it", p.EndpointType))
	}
	if p.DownloadVideoContent && p.EndpointType != EndpointVideoGeneration {
		v.add("download_video_content", fmt.Sprintf("applies to --endpoint-type video_generation, not %s: remove it", p.EndpointType))
	}
	if (p.EndpointType == EndpointImageEdit || p.EndpointType == EndpointImageRetrieval) && p.InputFile == "" && !img.Enabled() {
		v.add("endpoint_type", p.EndpointType+" sends images: give --image-width-mean and --image-height-mean, or an --input-file whose records name images")
	}
	for _, m := range []struct {
		field, what string
		on          bool
	}{{"image_width_mean", "images", img.Enabled()}, {"audio_length_mean", "audios", aud.Enabled()},
		{"video_width", "videos", vid.Enabled()}} {
		if !m.on {
			continue
		}
		if p.InputFile != "" {
			v.add(m.field, fmt.Sprintf("synthetic %s go with synthetic prompts: with --input-file, give them in the records' media fields (or remove the option)", m.what))
		}
		if !mediaEndpoints[p.EndpointType] {
			v.add(m.field, fmt.Sprintf("synthetic %s are sent as content parts of chat messages: --endpoint-type %s sends none (use chat, or remove the option)", m.what, p.EndpointType))
		}
	}
}
