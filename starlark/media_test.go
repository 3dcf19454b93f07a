package starlark_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/starlark"
)

// TestMediaOptions: profile(...) takes every image, audio and video option
// under its AIPerf flag's snake_case name (docs/multimodal.md).
func TestMediaOptions(t *testing.T) {
	sweeps := loadScript(t, `
sweep(name = "chat", base = profile(model = "m", endpoint_type = "chat",
    image_width_mean = 64, image_height_mean = 48, image_width_stddev = 2, image_height_stddev = 3,
    image_batch_size = 2, image_format = "jpeg", image_source = "noise", image_source_sampling = "random-with-replacement",
    audio_length_mean = 1.5, audio_length_stddev = 0.1, audio_batch_size = 3, audio_format = "wav",
    audio_depths = [16, 24], audio_sample_rates = [16, 44.1], audio_num_channels = 2,
    video_width = 64, video_height = 32, video_batch_size = 1, video_duration = 2.0, video_fps = 8,
    video_synth_type = "grid_clock", video_format = "mp4", video_codec = "libx264",
    video_audio_sample_rate = 16000, video_audio_num_channels = 1, video_audio_codec = "aac", video_audio_depth = 24))
sweep(name = "gen", base = profile(model = "m", endpoint_type = "video_generation", download_video_content = True))
sweep(name = "uuids", base = profile(model = "m", endpoint_type = "chat", input_file = "in.jsonl", uuid_and_strip = True))
`, starlark.Options{})
	require.Len(t, sweeps, 3)
	assert.True(t, sweeps[2].Cells[0].Profile.UUIDAndStrip)
	p := sweeps[0].Cells[0].Profile
	assert.Equal(t, []float64{64, 48, 2, 3}, []float64{p.ImageWidthMean, p.ImageHeightMean, p.ImageWidthStddev, p.ImageHeightStddev})
	require.NotNil(t, p.ImageBatchSize)
	assert.Equal(t, 2, *p.ImageBatchSize)
	assert.Equal(t, []string{"jpeg", "noise", "random-with-replacement"}, []string{p.ImageFormat, p.ImageSource, p.ImageSourceSampling})
	assert.Equal(t, []float64{1.5, 0.1}, []float64{p.AudioLengthMean, p.AudioLengthStddev})
	require.NotNil(t, p.AudioBatchSize)
	assert.Equal(t, 3, *p.AudioBatchSize)
	assert.Equal(t, "wav", p.AudioFormat)
	assert.Equal(t, []int{16, 24}, p.AudioDepths)
	assert.Equal(t, []float64{16, 44.1}, p.AudioSampleRates)
	assert.Equal(t, 2, p.AudioNumChannels)
	assert.Equal(t, []int{64, 32, 1, 24}, []int{p.VideoWidth, p.VideoHeight, p.VideoAudioNumChannels, p.VideoAudioDepth})
	require.NotNil(t, p.VideoBatchSize)
	require.NotNil(t, p.VideoDuration)
	require.NotNil(t, p.VideoFPS)
	require.NotNil(t, p.VideoAudioSampleRate)
	assert.Equal(t, 1, *p.VideoBatchSize)
	assert.Equal(t, 2.0, *p.VideoDuration)
	assert.Equal(t, 8, *p.VideoFPS)
	assert.Equal(t, 16000.0, *p.VideoAudioSampleRate)
	assert.Equal(t, []string{"grid_clock", "mp4", "libx264", "aac"}, []string{p.VideoSynthType, p.VideoFormat, p.VideoCodec, p.VideoAudioCodec})
	assert.True(t, sweeps[1].Cells[0].Profile.DownloadVideoContent)
}
