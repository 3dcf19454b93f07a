package plan

// audioTranscription checks the options of --endpoint-type
// audio_transcription: each request uploads one audio as the multipart
// "file" part, so there must be audio (synthetic or an input file's), the
// body cannot be JSON, and nothing else it would drop may be asked for.
func (v *validator) audioTranscription(p *Profile) {
	if p.EndpointType != EndpointAudioTranscription {
		return
	}
	v.check(p.RequestContentType != "application/json", "request_content_type",
		"endpoint type audio_transcription requires multipart/form-data; application/json is not supported: remove --request-content-type")
	if _, ok := p.Extras()["file"]; ok {
		v.add("extra_inputs", "file is the endpoint's (audio_transcription uploads each request's audio as the file part): remove it")
	}
	if p.InputFile == "" && !p.Audios().Enabled() {
		v.add("endpoint_type", "audio_transcription uploads one audio a request: give --audio-length-mean (synthetic audio, "+
			"--audio-format wav or mp3), or an --input-file of single_turn records with an audio")
	}
	if p.AudioBatchSize != nil && *p.AudioBatchSize > 1 {
		v.add("audio_batch_size", "audio_transcription uploads one audio a request (the turn's first): remove it, or give 1")
	}
	v.check(!p.Images().Enabled(), "image_width_mean", "audio_transcription sends only the audio: remove the image options")
	v.check(!p.Videos().Enabled(), "video_width", "audio_transcription sends only the audio: remove the video options")
}
