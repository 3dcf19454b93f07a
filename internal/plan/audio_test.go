package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAudioTranscriptionChecked: audio_transcription needs an audio a
// request, a multipart body and no "file" extra; everything it would not
// send is refused before any traffic, each problem naming its flag.
func TestAudioTranscriptionChecked(t *testing.T) {
	asr := func(p *Profile) { p.EndpointType, p.AudioLengthMean = EndpointAudioTranscription, 1 }
	for name, c := range map[string]struct {
		set  func(p *Profile)
		want string
	}{
		"no audio": {func(p *Profile) { asr(p); p.AudioLengthMean = 0 },
			"--endpoint-type audio_transcription uploads one audio a request: give --audio-length-mean"},
		"json": {func(p *Profile) { asr(p); p.RequestContentType = "application/json" },
			"--request-content-type endpoint type audio_transcription requires multipart/form-data; application/json is not supported"},
		"file extra": {func(p *Profile) { asr(p); p.ExtraInputs = []string{"file:x.wav"} }, "--extra-inputs file is the endpoint's"},
		"two audios": {func(p *Profile) { asr(p); p.AudioBatchSize = new(2) }, "--audio-batch-size audio_transcription uploads one audio a request"},
		"images":     {func(p *Profile) { asr(p); p.ImageWidthMean, p.ImageHeightMean = 8, 8 }, "--image-width-mean audio_transcription sends only the audio"},
		"videos":     {func(p *Profile) { asr(p); p.VideoWidth, p.VideoHeight = 64, 48 }, "--video-width audio_transcription sends only the audio"},
		"batch":      {func(p *Profile) { asr(p); p.PromptBatchSize = 2 }, "--prompt-batch-size applies to the embeddings"},
		"embeddings": {func(p *Profile) { p.EndpointType, p.AudioLengthMean = EndpointEmbeddings, 1 }, "--endpoint-type embeddings sends none"},
	} {
		t.Run(name, func(t *testing.T) {
			p := NewProfile()
			p.Model = []string{"m"}
			c.set(&p)
			err := p.Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	for name, set := range map[string]func(p *Profile){
		"synthetic audio": asr,
		"multipart":       func(p *Profile) { asr(p); p.RequestContentType = "multipart/form-data" },
		"extras":          func(p *Profile) { asr(p); p.ExtraInputs = []string{"language:en", "response_format:json"} },
		"input file":      func(p *Profile) { asr(p); p.AudioLengthMean, p.InputFile = 0, "in.jsonl" },
		"streaming":       func(p *Profile) { asr(p); p.Streaming = true },
	} {
		t.Run(name, func(t *testing.T) {
			p := NewProfile()
			p.Model = []string{"m"}
			set(&p)
			require.NoError(t, p.Check())
			assert.False(t, p.Streams(), "the API does not stream: --streaming is dropped with a notice")
			assert.Equal(t, EndpointSpec{Path: "/v1/audio/transcriptions", Form: true}, p.Spec())
			assert.True(t, SendsMedia(p.EndpointType))
		})
	}
}
