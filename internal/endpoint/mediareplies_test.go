package endpoint

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestImageRepliesMustCarryImages: a base64 image must be valid base64
// whose bytes start with an image header; a URL is taken as it is.
func TestImageRepliesMustCarryImages(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	data := func(field, v string) string { return `{"created":1,"data":[{"` + field + `":"` + v + `"}]}` }
	req := func(url string) Request { return apiReq(url, plan.EndpointImageGeneration, false) }
	checkReplies(t, req, []replyCase{
		{"png", data("b64_json", b64("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")), ""},
		{"jpeg", data("b64_json", b64("\xff\xd8\xff\xe0\x00\x10JFIF")), ""},
		{"gif", data("b64_json", b64("GIF89a\x01\x00\x01\x00")), ""},
		{"webp", data("b64_json", b64("RIFF\x24\x00\x00\x00WEBPVP8 ")), ""},
		{"url", data("url", "https://example.com/a.png"), ""},
		{"nim artifact", `{"artifacts":[{"base64":"` + b64("\x89PNG\r\n\x1a\n") + `","finishReason":"SUCCESS"}]}`, ""},
		{"not base64", data("b64_json", "!!!notbase64"), "data[0].b64_json is not valid base64"},
		{"base64 of text", data("b64_json", "aGVsbG8="), "data[0].b64_json is not an image: no PNG, JPEG, GIF or WebP header in its first 5 decoded byte(s)"},
		{"truncated base64", data("b64_json", b64("\x89PNG\r\n\x1a\n")[:7]), "data[0].b64_json is not valid base64"},
		{"riff but not webp", data("b64_json", b64("RIFF\x24\x00\x00\x00WAVEfmt ")), "data[0].b64_json is not an image"},
		{"webp magic without riff", data("b64_json", b64("XXXX\x24\x00\x00\x00WEBPVP8 ")), "data[0].b64_json is not an image"},
		{"bad base64 after a png header", data("b64_json", b64("\x89PNG\r\n\x1a\n\x00\x00\x00\r")+"!!!!"), "data[0].b64_json is not valid base64"},
		{"nim artifact of text", `{"artifacts":[{"base64":"aGVsbG8="}]}`, "artifacts[0].base64 is not an image"},
	})
}

// videoServer answers a submit with job v1 (or submit when set) and each
// poll with status.
func videoServer(t *testing.T, submit, status string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/videos":
			if submit == "" {
				submit = `{"id": "v1", "status": "queued"}`
			}
			_, _ = w.Write([]byte(submit))
		case "/v1/videos/v1":
			_, _ = w.Write([]byte(status))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/videos"
}

// TestVideoFiguresMustBePlausible: a completed job's negative, non-finite,
// absurd or non-numeric figures are dropped (described in Untrusted), as
// bad optional usage counts are; the job is still measured.
func TestVideoFiguresMustBePlausible(t *testing.T) {
	t.Setenv(PollIntervalEnv, "0.1")
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name, figures       string
		inference, memoryMB *float64
		untrusted           string
	}{
		{"plausible", `"inference_time_s": 1.5, "peak_memory_mb": 900`, f(1.5), f(900), ""},
		{"absent and null", `"peak_memory_mb": null`, nil, nil, ""},
		{"negative time", `"inference_time_s": -3, "peak_memory_mb": 900`, nil, f(900), "inference_time_s is negative (-3)"},
		{"absurd memory", `"inference_time_s": 2, "peak_memory_mb": 1e308`, f(2), nil, "peak_memory_mb is implausible (1e308)"},
		{"beyond float64", `"inference_time_s": 1e999`, nil, nil, "inference_time_s is not finite (1e999)"},
		{"wrong types", `"inference_time_s": "abc", "peak_memory_mb": [1]`, nil, nil,
			`inference_time_s is not a number ("abc"); peak_memory_mb is not a number ([1])`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := videoServer(t, "", `{"id": "v1", "status": "completed", `+tc.figures+`}`)
			res := New(Options{}).Do(context.Background(), Request{URL: url, EndpointType: plan.EndpointVideoGeneration, Model: "wan", Prompt: "a lake"})
			require.Nil(t, res.Err, "a completed job is measured")
			require.NotNil(t, res.Video)
			assert.Equal(t, tc.inference, res.Video.InferenceS)
			assert.Equal(t, tc.memoryMB, res.Video.PeakMemoryMB)
			assert.Equal(t, tc.untrusted, res.Video.Untrusted)
		})
	}
}

// TestVideoRepliesOfTheWrongTypeNameTheField: a job object whose field has
// the wrong type is an invalid response naming the field and its type.
func TestVideoRepliesOfTheWrongTypeNameTheField(t *testing.T) {
	t.Setenv(PollIntervalEnv, "0.1")
	for _, tc := range []struct{ name, submit, status, want string }{
		{"submit id a number", `{"id": 5, "status": "queued"}`, "", "video job response (text/plain): id is a JSON number, not a string"},
		{"submit status an object", `{"id": "v1", "status": {}}`, "", "status is a JSON object, not a string"},
		{"poll status a number", "", `{"id": "v1", "status": 3}`, "poll the video job: status is a JSON number, not a string"},
		{"poll not json", "", `<html>`, "poll the video job: not a JSON job status: <html>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := videoServer(t, tc.submit, tc.status)
			res := New(Options{}).Do(context.Background(), Request{URL: url, EndpointType: plan.EndpointVideoGeneration, Model: "wan", Prompt: "a lake"})
			require.NotNil(t, res.Err)
			assert.Equal(t, ErrTypeInvalidResponse, res.Err.Type)
			assert.Contains(t, res.Err.Message, tc.want)
			assert.NotContains(t, res.Err.Message, "the body is not a JSON object")
		})
	}
}
