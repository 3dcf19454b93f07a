package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aiperf-go/aiperf/internal/media"
)

// audioTranscriptionBody is audio_transcription's body, AIPerf's: a JSON
// object of the model and the extras, and the turn's first audio as the
// "file" formFile, audio.<format> with its format's Content-Type. The
// client sends it as multipart/form-data (formBody); inputs.json shows it
// as it is. A "file" extra is the endpoint's and is not sent (plan.Check
// refuses it in --extra-inputs).
func audioTranscriptionBody(req *Request) ([]byte, error) {
	audio := firstAudio(req)
	if audio == nil {
		return nil, errors.New("build request body: audio_transcription needs an audio, and this turn has none")
	}
	if !strings.HasPrefix(audio.URL, "data:") {
		return nil, fmt.Errorf("build request body: audio_transcription uploads the audio's bytes, and this turn's audio is a URL (%s): give a local file or a data URI", audio.URL)
	}
	fields := map[string]any{"model": req.Model}
	for _, extra := range []map[string]any{req.Extra, req.TurnExtra} {
		for k, v := range extra {
			if k != "file" {
				fields[k] = v
			}
		}
	}
	format := audioFormat(audio)
	fields["file"] = formFile{B64Data: audio.Data(), Filename: "audio." + format, ContentType: audioMIME(format)}
	return encode(fields)
}

// firstAudio is the request's first audio: of its media (a single turn),
// else of its last message (the current turn of a conversation); nil
// when it has none.
func firstAudio(req *Request) *media.Item {
	items := req.Media
	if len(items) == 0 && len(req.Messages) > 0 {
		items = req.Messages[len(req.Messages)-1].Media
	}
	for i := range items {
		if items[i].Kind == media.Audio {
			return &items[i]
		}
	}
	return nil
}

// audioFormat is an audio's file format: the Item's, else its data URI's
// subtype (audio/mpeg is mp3), else wav.
func audioFormat(it *media.Item) string {
	if it.Format != "" {
		return it.Format
	}
	head, _, _ := strings.Cut(strings.TrimPrefix(it.URL, "data:"), ";")
	switch sub := strings.TrimPrefix(head, "audio/"); {
	case sub == "mpeg":
		return "mp3"
	case sub != "" && sub != head:
		return strings.TrimPrefix(sub, "x-")
	}
	return "wav"
}

// audioMIME is the Content-Type AIPerf gives an audio file of a format.
func audioMIME(format string) string {
	switch format {
	case "mp3":
		return "audio/mpeg"
	case "m4a", "mp4":
		return "audio/mp4"
	}
	return "audio/" + format // wav, flac, ogg, webm and any other
}

// transcriptionFormat reads an audio transcription reply: OpenAI's JSON
// {"text": ..., "usage"?: ...}. A reply without a string "text" is not a
// transcription (a response_format of text, srt or vtt is not read, as in
// AIPerf). Usage of type "tokens" is kept as input and output tokens; a
// "duration" usage counts seconds, not tokens, and is left in the raw
// reply only.
type transcriptionFormat struct{}

func (transcriptionFormat) label() string { return "audio transcription" }

func (transcriptionFormat) stream() streamDecoder { return nonStreaming{} }

func (transcriptionFormat) whole(b []byte, status int) (piece, string) {
	if e := wholeError(b, status); e != nil {
		return piece{err: e}, ""
	}
	var v struct {
		Text  *string         `json:"text"`
		Usage json.RawMessage `json:"usage"`
	}
	if why := decodeObject(b, &v); why != "" {
		return piece{}, why
	}
	if v.Text == nil {
		return piece{}, `no "text" in the reply (a transcription is {"text": ...})`
	}
	p := piece{text: *v.Text}
	var u struct {
		Type string `json:"type"`
	}
	if len(v.Usage) > 0 && json.Unmarshal(v.Usage, &u) == nil && u.Type == "tokens" {
		var tokens responsesUsage
		if json.Unmarshal(v.Usage, &tokens) == nil {
			p.usage = tokens.metrics()
		}
	}
	return p, ""
}
