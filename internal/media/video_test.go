package media

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVideosNeedFFmpeg: without ffmpeg on PATH, synthetic videos fail
// before any is made, naming the package to install.
func TestVideosNeedFFmpeg(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Videos(context.Background(), VideoOptions{Width: 32, Height: 32, Batch: 1, Seconds: 1, FPS: 2}, 1, 1, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "install ffmpeg (Debian/Ubuntu: apt-get install ffmpeg); ffmpeg is not on PATH")
}

// TestVideos: every synthesis type and format makes a video that ffprobe
// reads at the size, frame rate and duration asked for, with the audio
// track asked for (skipped when ffmpeg is not installed).
func TestVideos(t *testing.T) {
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg): skipping synthetic video checks")
	}
	for _, c := range []VideoOptions{
		{Synth: SynthMovingShapes, Format: FormatWebM},
		{Synth: SynthGridClock, Format: FormatMP4, Codec: "libx264"},
		{Synth: SynthNoise, Format: FormatWebM, AudioChannels: 1, AudioRateHz: 16},
	} {
		c.Width, c.Height, c.Batch, c.Seconds, c.FPS = 64, 48, 1, 2, 4
		items, err := Videos(context.Background(), c, 3, 2, 0)
		require.NoError(t, err, "%+v", c)
		assert.True(t, items[0].URL != items[1].URL, "%s: no two videos alike", c.Synth)
		raw, err := base64.StdEncoding.DecodeString(items[0].Data())
		require.NoError(t, err)
		it, err := FromBytes(Video, raw)
		require.NoError(t, err)
		assert.Equal(t, c.Format, it.Format)
		assert.Equal(t, [2]int{64, 48}, [2]int{it.Width, it.Height}, "%s: from the container header", c.Format)
		assert.InDelta(t, 2, it.Seconds, 0.3, "%s: from the container header", c.Format)
		path := filepath.Join(t.TempDir(), "v."+c.Format)
		require.NoError(t, os.WriteFile(path, raw, 0o600))
		out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-show_entries",
			"stream=codec_type,width,height,nb_read_frames", "-of", "csv=p=0", path).CombinedOutput()
		require.NoError(t, err, string(out))
		lines := strings.Fields(strings.TrimSpace(string(out)))
		assert.Contains(t, lines, "video,64,48,8", "%s: 2 s at 4 fps", c.Synth)
		if c.AudioChannels > 0 {
			assert.Contains(t, string(out), "audio")
		}
	}
}
