package metrics

// AIPerf's image, audio and video metrics (its metrics reference: Image,
// Video and Audio Metrics), and ours of the request's size.
const (
	TagNumImages          = "num_images"
	TagImageThroughput    = "image_throughput"
	TagImageLatency       = "image_latency"
	TagAudioDuration      = "audio_duration"
	TagRTFX               = "rtfx"
	TagVideoInferenceTime = "video_inference_time"
	TagVideoPeakMemory    = "video_peak_memory"
	// TagPayloadBytes is ours: the request body's size, what the client
	// sent (a media payload's base64 included).
	TagPayloadBytes = "request_payload_bytes"
)

// Media metric units.
const (
	UnitImages       = "images"
	UnitImagesPerSec = "images/sec"
	UnitMsPerImage   = "ms/image"
	UnitMB           = "MB"
	UnitBytes        = "bytes"
)

func init() {
	recordDefs[idNumImages] = def{TagNumImages, "Number of Images", UnitImages}
	recordDefs[idImageThroughput] = def{TagImageThroughput, "Image Throughput", UnitImagesPerSec}
	recordDefs[idImageLatency] = def{TagImageLatency, "Image Latency", UnitMsPerImage}
	recordDefs[idAudioDuration] = def{TagAudioDuration, "Audio Duration", UnitSec}
	recordDefs[idRTFX] = def{TagRTFX, "Inverse Real-Time Factor", UnitRatio}
	recordDefs[idVideoInferenceTime] = def{TagVideoInferenceTime, "Video Inference Time", UnitMs}
	recordDefs[idVideoPeakMemory] = def{TagVideoPeakMemory, "Video Peak Memory", UnitMB}
	recordDefs[idPayloadBytes] = def{TagPayloadBytes, "Request Payload Size", UnitBytes}
	// AIPerf's display orders where it has them (RTFx 850, the images'
	// 860 and 861); the video job's figures follow. num_images,
	// audio_duration and the payload's size are exported only. AIPerf
	// flags RTFx LARGER_IS_BETTER and none of the image metrics, but a
	// throughput is: images/sec and RTFx are goodput floors
	// (LargerIsBetter), higher-is-better in compare.
	catalog[TagRTFX] = info{GroupDefault, 850, Higher}
	catalog[TagImageThroughput] = info{GroupDefault, 860, Higher}
	catalog[TagImageLatency] = info{GroupDefault, 861, Lower}
	catalog[TagVideoInferenceTime] = info{GroupDefault, 870, Lower}
	catalog[TagVideoPeakMemory] = info{GroupDefault, 871, Lower}
}

// MediaStats is what a request with media carried and what the server
// reported of them.
type MediaStats struct {
	// Images is the image parts of the request body (AIPerf's num_images:
	// every turn's, when the request re-sends its history).
	Images int `json:"images,omitempty"`
	// AudioSeconds is the duration of its audio inputs, when known.
	AudioSeconds float64 `json:"audio_seconds,omitempty"`
	// VideoInferenceS and VideoPeakMemoryMB are a video job's
	// inference_time_s and peak_memory_mb, when the server reported them.
	VideoInferenceS   *float64 `json:"video_inference_s,omitempty"`
	VideoPeakMemoryMB *float64 `json:"video_peak_memory_mb,omitempty"`
	// VideoUntrusted says why a figure the server reported was dropped
	// (negative, not finite, implausible, not a number); "" when none was.
	VideoUntrusted string `json:"video_untrusted,omitempty"`
	// PayloadBytes is the size of the request body sent.
	PayloadBytes int `json:"payload_bytes,omitempty"`
}

// visitMedia emits a successful request's media metrics, AIPerf's
// formulas: image_throughput = num_images / latency (s), image_latency =
// latency (ms) / num_images, rtfx = audio_duration / latency (s).
func visitMedia(r *Record, emit func(id int, v float64)) {
	m := r.Media
	if m == nil {
		return
	}
	latency := LatencyNs(r)
	if m.Images > 0 {
		emit(idNumImages, float64(m.Images))
		if latency > 0 {
			emit(idImageThroughput, float64(m.Images)/(float64(latency)/1e9))
			emit(idImageLatency, ms(latency)/float64(m.Images))
		}
	}
	if m.AudioSeconds > 0 {
		emit(idAudioDuration, m.AudioSeconds)
		if latency > 0 {
			emit(idRTFX, m.AudioSeconds/(float64(latency)/1e9))
		}
	}
	if m.VideoInferenceS != nil {
		emit(idVideoInferenceTime, *m.VideoInferenceS*1e3)
	}
	if m.VideoPeakMemoryMB != nil {
		emit(idVideoPeakMemory, *m.VideoPeakMemoryMB)
	}
	if m.PayloadBytes > 0 {
		emit(idPayloadBytes, float64(m.PayloadBytes))
	}
}
