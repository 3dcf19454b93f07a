package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// video_generation follows SGLang's (and OpenAI's) asynchronous job
// pattern: POST /v1/videos submits the prompt and answers a job id; GET
// /v1/videos/{id} is polled until its status is completed (or failed);
// with --download-video-content, GET /v1/videos/{id}/content is read too.
// The request's latency runs from the submit to the completed status (or
// the end of the download).

// videoGenBody is video_generation's body: the prompt and model, the
// extras (size, seconds, fps, num_frames, ...) merged over them.
func videoGenBody(req *Request) map[string]any {
	m := make(map[string]any, 2+len(req.Extra)+len(req.TurnExtra))
	m["prompt"] = req.Prompt
	m["model"] = req.Model
	return m
}

// PollIntervalEnv names AIPerf's setting of the seconds between status
// polls (0.1 to 60; default 0.1).
const PollIntervalEnv = "AIPERF_HTTP_VIDEO_POLL_INTERVAL"

// pollInterval is the time between status polls: PollIntervalEnv when it
// is a number, clamped to [0.1 s, 60 s], else 0.1 s.
func pollInterval() time.Duration {
	s, err := strconv.ParseFloat(os.Getenv(PollIntervalEnv), 64)
	if err != nil || s != s {
		s = 0.1
	}
	return time.Duration(min(60, max(0.1, s)) * float64(time.Second))
}

// videoJob is a video job's status reply, as far as aiperf reads it.
type videoJob struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Error  json.RawMessage `json:"error"`
	// SGLang's timings: inference_time_s and peak_memory_mb.
	InferenceS   videoFigure `json:"inference_time_s"`
	PeakMemoryMB videoFigure `json:"peak_memory_mb"`
}

// videoFormat reads the submit reply: a job with an id, not failed.
type videoFormat struct{}

func (videoFormat) label() string { return "video job" }

func (videoFormat) stream() streamDecoder { return nonStreaming{} }

func (videoFormat) whole(b []byte, status int) (piece, string) {
	var j videoJob
	if why := decodeObject(b, &j); why != "" {
		return piece{}, why
	}
	if e := errorField(j.Error, status); e != nil {
		return piece{err: e}, ""
	}
	if j.ID == "" {
		return piece{}, "the job has no id"
	}
	if why := badJobID(j.ID); why != "" {
		return piece{}, fmt.Sprintf("the job id %q %s", shortValue(j.ID), why)
	}
	return piece{job: j.ID}, ""
}

// badJobID says why a job id cannot be put in the poll path
// /v1/videos/{id}, "" when it can: an id holding '/', '?', '#', '%',
// '\', "..", white space or a control character would make the poll
// another URL (a path of the server's choosing, another host).
func badJobID(id string) string {
	if id == "." || strings.Contains(id, "..") {
		return `holds ".." (a path step): not a job id`
	}
	for _, r := range id {
		switch {
		case strings.ContainsRune("/?#%\\", r):
			return fmt.Sprintf("holds %q: not a job id that can be a path segment", r)
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return "holds white space or a control character: not a job id"
		}
	}
	return ""
}

// Video job statuses (OpenAI's, with the synonyms servers use): a
// pending job is polled again; any other status is not one of a job.
var (
	videoDone    = []string{"completed", "succeeded", "success"}
	videoFailed  = []string{"failed", "error", "cancelled", "canceled"}
	videoPending = []string{"queued", "in_progress", "pending", "running", "processing"}
)

// VideoStats are a finished video job's server-reported figures (nil when
// absent or implausible).
type VideoStats struct {
	InferenceS, PeakMemoryMB *float64
	// Untrusted says why a reported figure was dropped (not a number,
	// negative, not finite, above maxFigure), "" when none was.
	Untrusted string
	// Downloaded is the bytes of the video read (--download-video-content).
	Downloaded int64
}

// jobURL is the route of job under the submit URL (its status, or with
// suffix /content its video): /v1/videos/{id}, the submit URL's query kept
// after it (an api-version, say), not its path extended past the query.
// badJobID refused the ids that would change as a path segment.
func jobURL(submit, job, suffix string) string {
	u, err := url.Parse(submit)
	if err != nil { // it was sent: it parses
		return strings.TrimRight(submit, "/") + "/" + url.PathEscape(job) + suffix
	}
	raw := strings.TrimRight(u.EscapedPath(), "/") + "/" + url.PathEscape(job) + suffix
	if u.Path, err = url.PathUnescape(raw); err == nil {
		u.RawPath = raw
	}
	return u.String()
}

// pollVideo follows a submitted job to its end: it polls the job every
// pollInterval until completed (success) or failed (the request fails
// with the job's error), then downloads the video when asked. ctx bounds
// it (the request timeout).
func (c *Client) pollVideo(ctx context.Context, req *Request, res *Response) {
	status, content := jobURL(req.URL, res.job, ""), jobURL(req.URL, res.job, "/content")
	tick := time.NewTicker(pollInterval())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			res.EndNs, res.Err = c.now(), &metrics.Error{Type: ErrTypeTimeout, Message: fmt.Sprintf("video job %s: %v while waiting for it to complete", res.job, ctx.Err())}
			return
		case <-tick.C:
		}
		var j videoJob
		if err := c.getJSON(ctx, req, status, &j); err != nil {
			res.EndNs, res.Err = c.now(), err
			return
		}
		switch st := strings.ToLower(j.Status); {
		case slices.Contains(videoDone, st):
			res.EndNs, res.Video = c.now(), j.stats()
			if req.DownloadVideo {
				c.download(ctx, req, content, res)
			}
			return
		case slices.Contains(videoFailed, st):
			msg := string(j.Error)
			if msg == "" {
				msg = "no error given"
			}
			res.EndNs, res.Err = c.now(), &metrics.Error{Type: ErrTypeHTTP, Message: c.redact(fmt.Sprintf("video job %s %s: %s", res.job, j.Status, clipMsg(msg)))}
			return
		case !slices.Contains(videoPending, st):
			what := fmt.Sprintf("status %q", shortValue(j.Status))
			if j.Status == "" {
				what = "no status"
			}
			res.EndNs, res.Err = c.now(), &metrics.Error{Code: res.Status, Type: ErrTypeInvalidResponse, Message: c.redact(fmt.Sprintf(
				"poll the video job %s: the job has %s, expected one of queued, in_progress, completed or failed", res.job, what))}
			return
		}
	}
}

// getJSON GETs url and decodes its JSON body (at most the response bound).
func (c *Client) getJSON(ctx context.Context, req *Request, url string, v any) *metrics.Error {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &metrics.Error{Type: ErrTypeRequest, Message: fmt.Sprintf("poll the video job: %v", err)}
	}
	hr.Header = c.header(*req)
	resp, err := c.keep.Do(hr)
	if err != nil {
		return &metrics.Error{Type: ErrTypeConnection, Message: c.redact(fmt.Sprintf("poll the video job: %v", err))}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxResp)+1))
	switch {
	case err != nil:
		return &metrics.Error{Type: ErrTypeConnection, Message: c.redact(fmt.Sprintf("poll the video job: %v", err))}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return &metrics.Error{Code: resp.StatusCode, Type: ErrTypeHTTP, Message: c.redact(fmt.Sprintf("poll the video job: HTTP %d: %s", resp.StatusCode, clipMsg(string(b))))}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &metrics.Error{Code: resp.StatusCode, Type: ErrTypeInvalidResponse,
			Message: c.redact("poll the video job: " + jsonProblem(err, "not a JSON job status: "+clipMsg(string(b))))}
	}
	return nil
}

// download reads the finished video, ending the request when it is read.
func (c *Client) download(ctx context.Context, req *Request, url string, res *Response) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err == nil {
		hr.Header = c.header(*req)
		var resp *http.Response
		if resp, err = c.keep.Do(hr); err == nil {
			defer resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				res.EndNs, res.Err = c.now(), &metrics.Error{Code: resp.StatusCode, Type: ErrTypeHTTP, Message: fmt.Sprintf("download the video: HTTP %d", resp.StatusCode)}
				return
			}
			res.Video.Downloaded, err = io.Copy(io.Discard, resp.Body)
		}
	}
	res.EndNs = c.now()
	if err != nil {
		res.Err = &metrics.Error{Type: ErrTypeConnection, Message: c.redact(fmt.Sprintf("download the video: %v", err))}
	}
}

// clipMsg shortens a server's text for an error message.
func clipMsg(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
