package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// A synthetic dataset's images:, audio: and video: are AIPerf's
// ImageConfig, AudioConfig (ai-dynamo/aiperf src/aiperf/config/dataset/
// content.py @ 5d7c7eb) and VideoConfig (video.py @ 003fc0f), fields of
// SyntheticDataset (dataset/config.py); endpoint.download_video_content is
// EndpointConfig's. Each key maps to the flag its CLI converter
// (flags/_converter_dataset.py, _build_images/_audio/_video) reads it from.
func TestMediaSectionsMapToFlags(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  model: m",
		"  endpoint: {download_video_content: false}",
		"  dataset:",
		"    type: synthetic",
		"    images: {batch_size: 2, width: {mean: 256, stddev: 8}, height: 128, format: png,",
		"             source: noise, source_sampling: random-with-replacement}",
		"    audio: {batchSize: 1, length: {mean: 2.5, stddev: 0.5}, format: wav, sample_rates: [16, 44.1],",
		"            depths: [16, 24], channels: 2}",
		"    video: {batch_size: 1, duration: 2, fps: 8, width: 64, height: 48, format: mp4, codec: libvpx-vp9,",
		"            synth_type: grid_clock, audio: {sample_rate: 48, channels: 1, codec: libopus, depth: 16}}",
	)
	require.NoError(t, err)
	assert.Empty(t, f.Notes)
	p := f.Profile
	img := p.Images()
	assert.Equal(t, 2, img.Batch)
	assert.Equal(t, [4]float64{256, 8, 128, 0}, [4]float64{img.WidthMean, img.WidthStddev, img.HeightMean, img.HeightStddev})
	assert.Equal(t, "png", img.Format)
	assert.Equal(t, "noise", img.Source)
	assert.Equal(t, "random-with-replacement", img.Sampling)
	aud := p.Audios()
	assert.Equal(t, 1, aud.Batch)
	assert.Equal(t, [2]float64{2.5, 0.5}, [2]float64{aud.LengthMean, aud.LengthStddev})
	assert.Equal(t, []float64{16, 44.1}, aud.SampleRatesKHz)
	assert.Equal(t, []int{16, 24}, aud.Depths)
	assert.Equal(t, 2, aud.Channels)
	vid := p.Videos()
	assert.Equal(t, 1, vid.Batch)
	assert.Equal(t, 2.0, vid.Seconds)
	assert.Equal(t, 8, vid.FPS)
	assert.Equal(t, [2]int{64, 48}, [2]int{vid.Width, vid.Height})
	assert.Equal(t, [4]string{"mp4", "libvpx-vp9", "grid_clock", "libopus"}, [4]string{vid.Format, vid.Codec, vid.Synth, vid.AudioCodec})
	assert.Equal(t, [3]float64{48, 1, 16}, [3]float64{vid.AudioRateHz, float64(vid.AudioChannels), float64(vid.AudioDepth)})
	require.NoError(t, p.Check())

	// A section given starts from AIPerf's config defaults: 512×512 JPEG
	// images, 10 s audio, 1 s video, and batch_size 0 (said in a note).
	f, err = parse("benchmark:", "  model: m", "  dataset: {images: {}, audio: {}, video: {width: 8, height: 8}}")
	require.NoError(t, err)
	p = f.Profile
	img, aud, vid = p.Images(), p.Audios(), p.Videos()
	assert.Equal(t, [3]float64{0, 512, 512}, [3]float64{float64(img.Batch), img.WidthMean, img.HeightMean})
	assert.Equal(t, "jpeg", img.Format)
	assert.Equal(t, [2]float64{0, 10}, [2]float64{float64(aud.Batch), aud.LengthMean})
	assert.Equal(t, [2]float64{0, 1}, [2]float64{float64(vid.Batch), vid.Seconds})
	assert.False(t, img.Enabled() || aud.Enabled() || vid.Enabled(), "batch_size 0 sends none")
	require.Len(t, f.Notes, 3)
	assert.Equal(t, "bench.yaml:3: benchmark.dataset.images: sends no images: AIPerf's batch_size defaults to 0 in a config file; set batch_size: 1", f.Notes[0])

	// Without a section, the flags' defaults hold.
	f, err = parse("benchmark:", "  model: m", "  dataset: {isl: 10}")
	require.NoError(t, err)
	def := plan.NewProfile()
	assert.Equal(t, def.Images(), f.Profile.Images())

	f, err = parse("benchmark:", "  model: m", "  endpoint: {type: video_generation, download_video_content: true}")
	require.NoError(t, err)
	assert.True(t, f.Profile.DownloadVideoContent)

	f, err = parse("benchmark:", "  model: m", "  endpoint: {type: chat, uuid_and_strip: true}")
	require.NoError(t, err)
	assert.True(t, f.Profile.UUIDAndStrip)
}

// A bad media value is an error naming the file, line and key.
func TestMediaSectionErrors(t *testing.T) {
	tests := []struct {
		yaml []string
		err  string
	}{
		{[]string{"benchmark:", "  dataset:", "    images: {batch_size: 1, format: gif}"},
			`bench.yaml:3: benchmark.dataset.images.format: expected png | jpeg | random, got "gif"`},
		{[]string{"benchmark:", "  dataset:", "    images:", "      widht: 64"},
			`bench.yaml:4: benchmark.dataset.images: unknown key "widht" (did you mean "width"?)`},
		{[]string{"benchmark:", "  dataset:", "    images: {batch_size: one}"},
			`bench.yaml:3: benchmark.dataset.images.batch_size: expected int, got string "one"`},
		{[]string{"benchmark:", "  dataset:", "    audio: {batch_size: 1, sample_rates: [16, fast]}"},
			`bench.yaml:3: benchmark.dataset.audio.sample_rates[1]: expected number, got string "fast"`},
		{[]string{"benchmark:", "  dataset:", "    audio: {batch_size: 1, depths: [16.5]}"},
			`bench.yaml:3: benchmark.dataset.audio.depths[0]: expected int, got float 16.5`},
		{[]string{"benchmark:", "  dataset:", "    video: {batch_size: 1, audio: {codec: mp3}}"},
			`bench.yaml:3: benchmark.dataset.video.audio.codec: expected aac | libvorbis | libopus, got "mp3"`},
		{[]string{"benchmark:", "  dataset: {type: file, path: x.jsonl, images: {batch_size: 1}}"},
			`bench.yaml:2: benchmark.dataset: unknown key "images" (expected one of: name, type, random_seed, sampling, system_prompt, system_prompt_file, path, format, records, entries, synthesis, prompts, trace_session_sample_ratio, inter_turn_delay_cap_seconds, max_idle_gap_cap_seconds, replay_speedup, open_loop_replay, open_loop_strict, omit_kv_hints, trace_idle_gap_cap_seconds, ignore_trace_delays, use_think_time_only, weka_nested_timestamp_basis, max_context_length, force_min_tokens)`},
		{[]string{"benchmark:", "  endpoint: {download_video_content: yes-please}"},
			`bench.yaml:2: benchmark.endpoint.download_video_content: expected false | true, got string "yes-please"`},
	}
	for _, tc := range tests {
		_, err := parse(tc.yaml...)
		require.Error(t, err, tc.yaml)
		assert.Equal(t, tc.err, err.Error())
	}
}
