package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	pngpkg "image/png"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/mock"
)

// runTutorial runs one of AIPerf's documented command lines against a mock
// (localhost:8000 becomes its address) and checks it exited 0.
func runTutorial(t *testing.T, c tutorial, files map[string]string) (*mockServer, string) {
	t.Helper()
	m := startMock(t, c.mock)
	u, err := url.Parse(m.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	for name, body := range files {
		writeFile(t, dir, name, body)
	}
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = strings.ReplaceAll(a, "localhost:8000", u.Host)
	}
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "%s\nstdout:\n%s\nstderr:\n%s", c.doc, inv.stdout, inv.stderr)
	return m, dir
}

// TestVisionTutorial runs docs/tutorials/vision.md's synthetic-image
// command line with its count shrunk: every request carries one 512×512
// image, which the mock decodes and counts as Qwen2-VL does (324 tokens)
// on top of the 100 text tokens.
func TestVisionTutorial(t *testing.T) {
	c := tutorial{
		doc:    "docs/tutorials/vision.md @ 13992db (Profile with Synthetic Images)",
		change: "--request-count 8 instead of 20, and --num-dataset-entries 4 added (each entry is an image to encode)",
		args: []string{"profile", "--model", "Qwen/Qwen2-VL-2B-Instruct", "--endpoint-type", "chat",
			"--image-width-mean", "512", "--image-height-mean", "512", "--synthetic-input-tokens-mean", "100",
			"--streaming", "--url", "localhost:8000", "--request-count", "8", "--concurrency", "4", "--num-dataset-entries", "4"},
		mock: mock.Config{Fast: true},
	}
	_, dir := runTutorial(t, c, nil)
	exp := onlyExport(t, dir)
	assert.Equal(t, 8.0, metricAvg(t, exp, "request_count"))
	assert.Equal(t, 100.0, metricAvg(t, exp, "input_sequence_length"), "ISL counts the text, as AIPerf's")
	assert.Equal(t, float64(100+mock.ImageTokens(512, 512)), metricAvg(t, exp, "usage_prompt_tokens"),
		"the server's prompt tokens add the image's")
}

// TestImageSizeTTFT: against a mock that prefills each uncached prompt
// token in 200 µs, the time to first token it schedules is --ttft plus
// 200 µs × (text + image tokens), the image tokens following the
// documented Qwen2-VL formula, and the ISL aiperf exports under
// --use-server-token-count is that same count.
func TestImageSizeTTFT(t *testing.T) {
	const text, ttftMS, prefillUS = 50, 5.0, 200.0
	for _, side := range []int{256, 512, 1024} {
		t.Run(fmt.Sprint(side), func(t *testing.T) {
			s := fmt.Sprint(side)
			c := tutorial{doc: "docs/multimodal.md (The mock's image tokens)",
				args: []string{"profile", "-m", "Qwen/Qwen2-VL-2B-Instruct", "--url", "localhost:8000", "--streaming",
					"--image-width-mean", s, "--image-height-mean", s, "--isl", fmt.Sprint(text), "--osl", "2",
					"--num-dataset-entries", "2", "--request-count", "2", "--concurrency", "1", "--use-server-token-count", "--ui", "none"},
				mock: mock.Config{TTFT: ttftMS, ITL: 0.1, Prefill: prefillUS}}
			m, dir := runTutorial(t, c, nil)
			isl := text + mock.ImageTokens(side, side)
			exp := onlyExport(t, dir)
			assert.Equal(t, float64(isl), metricAvg(t, exp, "input_sequence_length"))
			first := m.srv.Timing().Schedule.First
			require.Equal(t, uint64(2), first.Count)
			want := ttftMS*1000 + prefillUS*float64(isl)
			assert.InDelta(t, want, first.MinUS, 1, "every request's TTFT as scheduled: 2 distinct images, nothing cached")
			assert.InDelta(t, want, first.MaxUS, 1)
		})
	}
}

// TestVisionInputFileTutorial runs docs/tutorials/vision.md's input-file
// command lines unchanged: the images are URLs, passed through as they
// are (the mock does not fetch them and counts each as a 512×512 image).
func TestVisionInputFileTutorial(t *testing.T) {
	inputs := `{"texts": ["Describe this image in detail."], "images": ["https://picsum.photos/512/512?random=1"]}
{"texts": ["What objects are visible in this image?"], "images": ["https://picsum.photos/512/512?random=2"]}
{"texts": ["Analyze the composition of this photo."], "images": ["https://picsum.photos/512/512?random=3"]}
{"texts": ["What is the main subject of this image?"], "images": ["https://picsum.photos/512/512?random=4"]}
{"texts": ["Provide a caption for this image."], "images": ["https://picsum.photos/512/512?random=5"]}
`
	c := tutorial{
		doc: "docs/tutorials/vision.md @ 13992db (Profile with Custom Input File)",
		args: []string{"profile", "--model", "Qwen/Qwen2-VL-2B-Instruct", "--endpoint-type", "chat",
			"--input-file", "inputs.jsonl", "--custom-dataset-type", "single_turn", "--streaming",
			"--url", "localhost:8000", "--request-count", "5", "--export-level", "raw"},
		mock: mock.Config{Fast: true},
	}
	_, dir := runTutorial(t, c, map[string]string{"inputs.jsonl": inputs})
	exp := onlyExport(t, dir)
	assert.Equal(t, 5.0, metricAvg(t, exp, "request_count"))
	assert.Greater(t, metricAvg(t, exp, "usage_prompt_tokens"), float64(mock.ImageTokens(512, 512)), "each request's image counted")
	raw := readFile(t, onlyArtifact(t, dir, "profile_export_raw.jsonl"))
	assert.True(t, strings.Contains(raw, `{"type":"image_url","image_url":{"url":"https://picsum.photos/512/512?random=1"}}`), "the URL sent as it is")
}

// TestBadMediaRefused: a record naming a missing image or a file that is
// not an image fails the run before any traffic, exit 2, naming the file,
// line and field.
func TestBadMediaRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "notes.png", "plain text")
	writeFile(t, dir, "in.jsonl", "{\"text\": \"a\", \"image\": \"notes.png\"}\n{\"text\": \"b\", \"images\": [\"gone.jpg\"]}\n")
	inv := cli(t, dir, quick(m.URL, "--input-file", "in.jsonl")...)
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "in.jsonl:1: image: image file: notes.png: not a PNG, JPEG or GIF image")
	assert.Contains(t, inv.stderr, `in.jsonl:2: images[0]: image file "gone.jpg" does not exist`)
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// onlyArtifact is the path of the one file called name under dir/artifacts.
func onlyArtifact(t *testing.T, dir, name string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", name))
	require.Len(t, files, 1)
	return files[0]
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestMediaNeedsChat: an input file naming images on an endpoint type that
// sends none is refused before traffic rather than sent without them.
func TestMediaNeedsChat(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", "{\"text\": \"a\", \"image\": \"https://example.com/a.png\"}\n")
	inv := cli(t, dir, quick(m.URL, "--input-file", "in.jsonl", "--endpoint-type", "completions")...)
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "in.jsonl names images, audios or videos, and --endpoint-type completions sends none")
	assert.Zero(t, m.control().InferenceRequests)
}

// TestAudioTutorial runs docs/tutorials/audio.md's synthetic-audio command
// line unchanged: each request carries a 5 s WAV at 16 kHz, which the mock
// decodes and counts as Qwen2-Audio (125 tokens) on top of the 550 text
// tokens of AIPerf's default prompt.
func TestAudioTutorial(t *testing.T) {
	c := tutorial{
		doc: "docs/tutorials/audio.md @ 13992db (Profile with Synthetic Audio)",
		args: []string{"profile", "--model", "Qwen/Qwen2-Audio-7B-Instruct", "--endpoint-type", "chat",
			"--audio-length-mean", "5.0", "--audio-format", "wav", "--audio-sample-rates", "16", "--streaming",
			"--url", "localhost:8000", "--request-count", "20", "--concurrency", "4"},
		mock: mock.Config{Fast: true},
	}
	_, dir := runTutorial(t, c, nil)
	exp := onlyExport(t, dir)
	assert.Equal(t, 20.0, metricAvg(t, exp, "request_count"))
	assert.Equal(t, 550.0, metricAvg(t, exp, "input_sequence_length"))
	assert.Equal(t, float64(550+mock.AudioTokens(5)), metricAvg(t, exp, "usage_prompt_tokens"))
	assert.Equal(t, 5.0, metricAvg(t, exp, "audio_duration"))
	lat, rtfx := exp["request_latency"].(map[string]any), exp["rtfx"].(map[string]any)
	assert.InDelta(t, 5/(lat["max"].(float64)/1000), rtfx["min"], 1e-6, "RTFx = audio seconds / latency seconds")
	assert.InDelta(t, 5/(lat["min"].(float64)/1000), rtfx["max"], 1e-6)
}

// TestAudioInputFileTutorial runs docs/tutorials/audio.md's input-file
// command line: the tutorial names AIPerf's test fixtures
// (/fixtures/audio/...), here WAVs of 1, 2 and 3 s written beside the
// input file and named by relative path; otherwise unchanged.
func TestAudioInputFileTutorial(t *testing.T) {
	files := map[string]string{"inputs.jsonl": `{"texts": ["Transcribe this."], "audios": ["test_audio_1s.wav"]}
{"texts": ["What is said?"], "audios": ["test_audio_2.wav"]}
{"texts": ["Summarize."], "audios": ["test_audio_3.wav"]}
`}
	for name, secs := range map[string]int{"test_audio_1s.wav": 1, "test_audio_2.wav": 2, "test_audio_3.wav": 3} {
		files[name] = string(media.NoiseWAV(rand.New(rand.NewPCG(1, uint64(secs))), 16000*secs, 16000, 1, 16))
	}
	c := tutorial{
		doc:    "docs/tutorials/audio.md @ 13992db (Profile with Custom Input File)",
		change: "the fixtures' paths (relative, written by the test)",
		args: []string{"profile", "--model", "Qwen/Qwen2-Audio-7B-Instruct", "--endpoint-type", "chat",
			"--input-file", "inputs.jsonl", "--custom-dataset-type", "single_turn", "--streaming",
			"--url", "localhost:8000", "--request-count", "3"},
		mock: mock.Config{Fast: true},
	}
	_, dir := runTutorial(t, c, files)
	exp := onlyExport(t, dir)
	assert.Equal(t, 3.0, metricAvg(t, exp, "request_count"))
	isl := metricAvg(t, exp, "input_sequence_length")
	assert.InDelta(t, isl+float64(mock.AudioTokens(1)+mock.AudioTokens(2)+mock.AudioTokens(3))/3, metricAvg(t, exp, "usage_prompt_tokens"), 1e-9,
		"the server counts each audio's tokens on top of the text")
}

// TestImageGenerationTutorial runs docs/tutorials/image-generation.md's
// command lines unchanged against the mock's /v1/images/generations (every
// reply must carry an image to count).
func TestImageGenerationTutorial(t *testing.T) {
	prompts := `{"text": "A serene mountain landscape at sunset"}
{"text": "A futuristic city with flying cars"}
{"text": "A cute robot playing with a kitten"}
`
	for name, c := range map[string]tutorial{
		"input file": {doc: "docs/tutorials/image-generation.md @ 013e460 (Text-to-Image Generation Using Input File)",
			args: []string{"profile", "--model", "black-forest-labs/FLUX.1-dev", "--tokenizer", "builtin",
				"--url", "http://localhost:8000", "--endpoint-type", "image_generation", "--input-file", "image_prompts.jsonl",
				"--custom-dataset-type", "single_turn", "--extra-inputs", "size:512x512", "--extra-inputs", "quality:standard",
				"--concurrency", "1", "--request-count", "3"}},
		"synthetic": {doc: "docs/tutorials/image-generation.md @ 013e460 (Text-to-Image Generation Using Synthetic Inputs)",
			args: []string{"profile", "--model", "black-forest-labs/FLUX.1-dev", "--tokenizer", "builtin",
				"--url", "http://localhost:8000", "--endpoint-type", "image_generation", "--extra-inputs", "size:512x512",
				"--extra-inputs", "quality:standard", "--synthetic-input-tokens-mean", "150",
				"--synthetic-input-tokens-stddev", "30", "--concurrency", "1", "--request-count", "3"}},
	} {
		t.Run(name, func(t *testing.T) {
			c.mock = mock.Config{Fast: true}
			m, dir := runTutorial(t, c, map[string]string{"image_prompts.jsonl": prompts})
			exp := onlyExport(t, dir)
			assert.Equal(t, 3.0, metricAvg(t, exp, "request_count"))
			assert.Positive(t, metricAvg(t, exp, "input_sequence_length"))
			assert.Zero(t, metricAvg(t, exp, "error_request_count"))
			assert.Equal(t, 3, m.control().InferenceRequests)
		})
	}
}

// TestImageEditTutorial runs docs/tutorials/sglang-image-edit.md's
// synthetic command line with counts shrunk: each request uploads a
// 512×512 reference image as the multipart "image" file.
func TestImageEditTutorial(t *testing.T) {
	c := tutorial{
		doc:    "docs/tutorials/sglang-image-edit.md @ 013e460 (Image Edit Using Synthetic Reference Images)",
		change: "--warmup-request-count 1 and --request-count 4 instead of 5 and 50, and --num-dataset-entries 4 added (each entry is an image to encode)",
		args: []string{"profile", "--model", "black-forest-labs/FLUX.2-klein-4B", "--tokenizer", "builtin",
			"--url", "http://localhost:30000", "--endpoint-type", "image_edit", "--image-batch-size", "1",
			"--image-width-mean", "512", "--image-height-mean", "512", "--extra-inputs", "size:512x512",
			"--extra-inputs", "num_inference_steps:4", "--extra-inputs", "guidance_scale:1.0",
			"--warmup-request-count", "1", "--request-count", "4", "--concurrency", "2", "--num-dataset-entries", "4"},
		mock: mock.Config{Fast: true},
	}
	for i, a := range c.args {
		c.args[i] = strings.ReplaceAll(a, "localhost:30000", "localhost:8000")
	}
	m, dir := runTutorial(t, c, nil)
	exp := onlyExport(t, dir)
	assert.Equal(t, 4.0, metricAvg(t, exp, "request_count"))
	assert.Zero(t, metricAvg(t, exp, "error_request_count"))
	assert.Equal(t, 5, m.control().InferenceRequests, "a warmup and 4 profiling edits, each a valid multipart upload")
}

// TestImageUploadsWaitForModel: the inference readiness probe of image_edit
// and image_retrieval uploads an image as their requests do (without one
// the server refuses every probe, and the model is never "ready").
func TestImageUploadsWaitForModel(t *testing.T) {
	for _, et := range []string{"image_edit", "image_retrieval"} {
		t.Run(et, func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true})
			dir := t.TempDir()
			inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", et, "--image-batch-size", "1",
				"--image-width-mean", "32", "--image-height-mean", "32", "--request-count", "2", "--num-dataset-entries", "1",
				"--ui", "none", "--wait-for-model-timeout", "30", "--wait-for-model-mode", "inference")
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			assert.Equal(t, 3, m.control().InferenceRequests, "the probe and both requests, each with its image")
			assert.Equal(t, 2.0, metricAvg(t, onlyExport(t, dir), "request_count"), "the probe is not recorded")
		})
	}
}

// TestSyntheticVideoTutorial runs docs/tutorials/synthetic-video.md's
// basic command line (skipped without ffmpeg): each request carries a 5 s
// 640×480 WebM (VP9, 4 fps) that the mock reads from its header and counts
// as Qwen2-VL's video tokens.
func TestSyntheticVideoTutorial(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg): synthetic videos cannot be encoded")
	}
	c := tutorial{
		doc:    "docs/tutorials/synthetic-video.md @ 003fc0f (Example: Basic Video Generation)",
		change: "--request-count 4 instead of 20, and --num-dataset-entries 4 added (each entry is a video to encode)",
		args: []string{"profile", "--model", "Qwen/Qwen2-VL-2B-Instruct", "--endpoint-type", "chat",
			"--endpoint", "/v1/chat/completions", "--url", "localhost:8000", "--video-width", "640", "--video-height", "480",
			"--video-fps", "4", "--video-duration", "5.0", "--request-count", "4", "--num-dataset-entries", "4"},
		mock: mock.Config{Fast: true},
	}
	_, dir := runTutorial(t, c, nil)
	exp := onlyExport(t, dir)
	assert.Equal(t, 4.0, metricAvg(t, exp, "request_count"))
	assert.Equal(t, metricAvg(t, exp, "input_sequence_length")+float64(mock.VideoTokens(640, 480, 5)), metricAvg(t, exp, "usage_prompt_tokens"))
}

// TestVideoGenerationTutorial runs docs/tutorials/sglang-video-generation.md's
// command lines against the mock's /v1/videos jobs: each request submits,
// polls until the job completes (50 ms of frames here) and, with
// --download-video-content, reads the video.
func TestVideoGenerationTutorial(t *testing.T) {
	prompts := `{"text": "A serene lake at sunset with mountains in the background"}
{"text": "A cat playing with a ball of yarn in a cozy living room"}
{"text": "A futuristic city with flying cars and neon lights"}
`
	base := []string{"profile", "--model", "Wan-AI/Wan2.1-T2V-1.3B-Diffusers", "--tokenizer", "builtin",
		"--url", "http://localhost:8000", "--endpoint-type", "video_generation"}
	file := []string{"--input-file", "video_prompts.jsonl", "--custom-dataset-type", "single_turn"}
	for name, c := range map[string]tutorial{
		"input file": {doc: "docs/tutorials/sglang-video-generation.md @ 013e460 (Basic Usage: Text-to-Video with Input File)",
			args: append(append(slices.Clone(base), file...), "--extra-inputs", "size:1280x720", "--extra-inputs", "seconds:4",
				"--concurrency", "1", "--request-count", "3")},
		"synthetic": {doc: "docs/tutorials/sglang-video-generation.md @ 013e460 (Basic Usage: Text-to-Video with Synthetic Prompts)",
			change: "--request-count 3 instead of 5",
			args: append(slices.Clone(base), "--extra-inputs", "size:1280x720", "--extra-inputs", "seconds:4",
				"--synthetic-input-tokens-mean", "50", "--synthetic-input-tokens-stddev", "10", "--concurrency", "1", "--request-count", "3")},
		"download": {doc: "docs/tutorials/sglang-video-generation.md @ 013e460 (Video Download Option)",
			args: append(append(slices.Clone(base), file...), "--extra-inputs", "size:1280x720", "--extra-inputs", "seconds:4",
				"--download-video-content", "--concurrency", "1", "--request-count", "3")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("AIPERF_HTTP_VIDEO_POLL_INTERVAL", "0.1")
			c.mock = mock.Config{TTFT: 1, VideoGenMSPerFrame: 50.0 / 64} // 4 s at 16 fps: 64 frames, 50 ms
			m, dir := runTutorial(t, c, map[string]string{"video_prompts.jsonl": prompts})
			exp := onlyExport(t, dir)
			assert.Equal(t, 3.0, metricAvg(t, exp, "request_count"))
			assert.Zero(t, metricAvg(t, exp, "error_request_count"))
			assert.Equal(t, 3, m.control().InferenceRequests, "polls are not inference requests")
			assert.GreaterOrEqual(t, metricAvg(t, exp, "request_latency"), 51.0, "the latency runs to the job's completion")
			assert.InDelta(t, 51, metricAvg(t, exp, "video_inference_time"), 0.5, "the server's inference_time_s, in ms")
			assert.Positive(t, metricAvg(t, exp, "video_peak_memory"))
		})
	}
}

// TestImageRetrievalTutorial runs docs/tutorials/nim-image-retrieval.md's
// command lines against the mock's /v1/infer: the input files' local paths
// are PNGs the test writes and the elided data URI (iVBORw0...Ug...) a whole
// one; the commands are unchanged.
func TestImageRetrievalTutorial(t *testing.T) {
	var png bytes.Buffer
	require.NoError(t, pngpkg.Encode(&png, image.NewGray(image.Rect(0, 0, 64, 64))))
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png.Bytes())
	files := map[string]string{
		"inputs.jsonl": `{"image": "https://assets.ngc.nvidia.com/products/api-catalog/nemo-retriever/object-detection/page-elements-example-1.jpg"}
{"image": "document_page.png"}
{"image": "` + uri + `"}
`,
		"multi_image_inputs.jsonl": `{"images": ["https://example.com/page1.png", "https://example.com/page2.png"]}
{"images": ["chart1.png", "chart2.png", "chart3.png"]}
`,
	}
	for _, name := range []string{"document_page.png", "chart1.png", "chart2.png", "chart3.png"} {
		files[name] = png.String()
	}
	for name, c := range map[string]tutorial{
		"custom images": {doc: "docs/tutorials/nim-image-retrieval.md @ 013e460 (Section 2. Profile with Custom Images)",
			args: []string{"profile", "--endpoint-type", "image_retrieval", "--model", "nvidia/nemoretriever-page-elements-v3",
				"--url", "localhost:8000", "--input-file", "inputs.jsonl", "--custom-dataset-type", "single_turn",
				"--request-count", "20", "--concurrency", "4"}},
		"several images": {doc: "docs/tutorials/nim-image-retrieval.md @ 013e460 (Section 3. Profile with Multiple Images per Request)",
			args: []string{"profile", "--endpoint-type", "image_retrieval", "--model", "nvidia/nemoretriever-page-elements-v3",
				"--url", "localhost:8000", "--input-file", "multi_image_inputs.jsonl", "--custom-dataset-type", "single_turn",
				"--request-count", "10", "--concurrency", "2"}},
	} {
		t.Run(name, func(t *testing.T) {
			c.mock = mock.Config{Fast: true}
			m, dir := runTutorial(t, c, files)
			exp := onlyExport(t, dir)
			n, _ := strconv.Atoi(c.args[len(c.args)-3])
			assert.Equal(t, float64(n), metricAvg(t, exp, "request_count"))
			assert.Zero(t, metricAvg(t, exp, "error_request_count"))
			assert.Equal(t, n, m.control().InferenceRequests)
		})
	}
}

// TestSolidoRAG: solido_rag sends AIPerf's SOLIDO body and counts the
// reply's content as its output.
func TestSolidoRAG(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "solido-model", "-u", m.URL, "--endpoint-type", "solido_rag", "--isl", "20",
		"--request-count", "3", "--ui", "none", "--export-level", "raw")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	exp := onlyExport(t, dir)
	assert.Equal(t, 3.0, metricAvg(t, exp, "request_count"))
	assert.Equal(t, 16.0, metricAvg(t, exp, "output_sequence_length"), "the mock's 16-word content")
	raw := readFile(t, onlyArtifact(t, dir, "profile_export_raw.jsonl"))
	assert.True(t, strings.Contains(raw, `"filters":{"family":"Solido","tool":"SDE"},"inference_model":"solido-model","query":["`), "AIPerf's body")
}

// TestMediaMetrics: a run with images reports AIPerf's image metrics
// (num_images, image_throughput = images/latency, image_latency =
// latency/images) and the body's size, in the console, the JSON export,
// the per-request export and the store (exported back and compared).
func TestMediaMetrics(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 2, ITL: 0.1})
	dir := t.TempDir()
	for _, side := range []string{"64", "128"} {
		inv := cli(t, dir, quick(m.URL, "--image-width-mean", side, "--image-height-mean", side, "--image-batch-size", "2",
			"--request-count", "4", "--artifact-dir", "run"+side)...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.Contains(t, inv.stdout, "Image Throughput (images/sec)")
		assert.Contains(t, inv.stdout, "Image Latency (ms/image)")
	}
	exp := readJSON(t, filepath.Join(dir, "run64", "profile_export_aiperf.json"))
	assert.Equal(t, 2.0, metricAvg(t, exp, "num_images"))
	latency := metricAvg(t, exp, "request_latency")
	assert.InDelta(t, latency/2, metricAvg(t, exp, "image_latency"), latency*1e-6)
	assert.Positive(t, metricAvg(t, exp, "image_throughput"))
	assert.Greater(t, metricAvg(t, exp, "request_payload_bytes"), 2*64*64*3.0, "two 64² noise PNGs, base64")
	jsonl := readFile(t, filepath.Join(dir, "run64", "profile_export.jsonl"))
	assert.Contains(t, jsonl, `"image_throughput":{"value":`)

	inv := cli(t, dir, "runs", "export", "1", "--format", "json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, `"image_latency"`, "stored with the run")
	inv = cli(t, dir, "compare", "1", "2", "--metric", "image_latency.avg,request_payload_bytes.avg", "--format", "json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "image_latency")
	assert.Contains(t, inv.stdout, "request_payload_bytes")
}

// TestVLMExampleSweep runs examples/vlm.star against the mock (its counts
// shrunk with --set: two requests a cell, each its own image, as a large
// image is slow to send and decode under -race): in every cell the ISL the
// server counted is the prompt's 100 tokens plus the image's, by the
// documented formula, and the TTFT the mock scheduled is --ttft plus the
// prefill of that many tokens (nothing cached: the images differ).
func TestVLMExampleSweep(t *testing.T) {
	subprocesses(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "vlm.star"))
	require.NoError(t, err)
	g := &sweepOnly{prefix: fmt.Sprintf("/vlm-%x", rand.Uint64())}
	m := startMockBehind(t, mock.Config{TTFT: 2, ITL: 0.05, Prefill: 20}, g.wrap)
	dir := t.TempDir()
	inv := cli(t, dir, "sweep", script, "--set", "url="+m.URL+g.prefix, "--set", "entries=2", "--set", "per_slot=0",
		"--set", "min_requests=2", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	found := 0
	err = filepath.WalkDir(filepath.Join(dir, "artifacts"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "profile_export_aiperf.json" {
			return err
		}
		var side, c int
		for _, part := range strings.Split(path, string(filepath.Separator)) {
			if n, _ := fmt.Sscanf(part, "image_%d_c%d", &side, &c); n == 2 {
				break
			}
		}
		require.NotZero(t, side, path)
		exp := readJSON(t, path)
		assert.Equal(t, float64(100+mock.ImageTokens(side, side)), metricAvg(t, exp, "input_sequence_length"), path)
		found++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 6, found, "one export per cell")
	first := m.srv.Timing().Schedule.First
	require.Equal(t, uint64(12), first.Count, "two requests a cell reached the mock; all it was sent:\n%s", g.log())
	assert.InDelta(t, 2000+20*float64(100+mock.ImageTokens(256, 256)), first.MinUS, 1, "the smallest image's prefill; all the mock was sent:\n%s", g.log())
	assert.InDelta(t, 2000+20*float64(100+mock.ImageTokens(1024, 1024)), first.MaxUS, 1, "the largest image's prefill, nothing cached")
}
