package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// A synthetic dataset's images:, audio: and video: are AIPerf's
// ImageConfig, AudioConfig and VideoConfig (src/aiperf/config/dataset/
// content.py and video.py, config schema 2.0), read into the Image, Audio
// and Video Input options. A section given starts from AIPerf's defaults
// for the section, which differ from the flags' in places: batch_size 0
// (no media: the section is off until it is set), images 512×512 JPEG,
// audio 10 s, video 1 s.

// mediaSection reads one media section: it applies the section's defaults,
// then its keys, and notes a batch_size left at 0.
func (d *decoder) mediaSection(what, batchOpt string, defaults func(*plan.Profile), fs func() []field) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if !d.mapping(v, path) {
			return
		}
		defaults(&d.f.Profile)
		d.fields(v, path, fs())
		if _, set := d.setAt[batchOpt]; !set {
			d.note(v, path, "sends no %s: AIPerf's batch_size defaults to 0 in a config file; set batch_size: 1", what)
		}
	}
}

func (d *decoder) imagesSection() func(string, *yaml.Node) {
	p := &d.f.Profile
	return d.mediaSection("images", "image_batch_size", func(p *plan.Profile) {
		p.ImageBatchSize, p.ImageWidthMean, p.ImageHeightMean, p.ImageFormat = plan.Ptr(0), 512, 512, media.FormatJPEG
	}, func() []field {
		return []field{
			{keys("batch_size"), d.opt("image_batch_size")},
			{keys("width"), d.length("image_width_mean", "image_width_stddev", false,
				func(x float64) { p.ImageWidthMean = x }, func(x float64) { p.ImageWidthStddev = x })},
			{keys("height"), d.length("image_height_mean", "image_height_stddev", false,
				func(x float64) { p.ImageHeightMean = x }, func(x float64) { p.ImageHeightStddev = x })},
			{keys("format"), d.opt("image_format", "png", "jpeg", "random")},
			{keys("source"), d.opt("image_source")},
			{keys("source_sampling"), d.opt("image_source_sampling", "random-with-replacement", "shuffle-cycle", "sequential-cycle")},
		}
	})
}

func (d *decoder) audioSection() func(string, *yaml.Node) {
	p := &d.f.Profile
	return d.mediaSection("audio", "audio_batch_size", func(p *plan.Profile) {
		p.AudioBatchSize, p.AudioLengthMean = plan.Ptr(0), 10
	}, func() []field {
		return []field{
			{keys("batch_size"), d.opt("audio_batch_size")},
			{keys("length"), d.length("audio_length_mean", "audio_length_stddev", false,
				func(x float64) { p.AudioLengthMean = x }, func(x float64) { p.AudioLengthStddev = x })},
			{keys("format"), d.opt("audio_format", "wav", "mp3")},
			{keys("sample_rates"), d.opt("audio_sample_rates")},
			{keys("depths"), d.opt("audio_depths")},
			{keys("channels"), d.opt("audio_num_channels")},
		}
	})
}

func (d *decoder) videoSection() func(string, *yaml.Node) {
	return d.mediaSection("videos", "video_batch_size", func(p *plan.Profile) {
		p.VideoBatchSize, p.VideoDuration = plan.Ptr(0), plan.Ptr(1.0)
	}, func() []field {
		return []field{
			{keys("batch_size"), d.opt("video_batch_size")},
			{keys("duration"), d.opt("video_duration")},
			{keys("fps"), d.opt("video_fps")},
			{keys("width"), d.opt("video_width")},
			{keys("height"), d.opt("video_height")},
			{keys("format"), d.opt("video_format", "webm", "mp4")},
			{keys("codec"), d.opt("video_codec")},
			{keys("synth_type"), d.opt("video_synth_type", "moving_shapes", "grid_clock", "noise")},
			{keys("audio"), d.section(func() []field {
				return []field{
					{keys("sample_rate"), d.opt("video_audio_sample_rate")},
					{keys("channels"), d.opt("video_audio_num_channels")},
					{keys("codec"), d.opt("video_audio_codec", "aac", "libvorbis", "libopus")},
					{keys("depth"), d.opt("video_audio_depth")},
				}
			})},
		}
	})
}
