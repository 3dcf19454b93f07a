package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/redirect"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// ready is the stage between prepare and the first control call: with
// --wait-for-model-timeout it probes the server until it is ready (AIPerf's
// wait for model), then it dials every origin once (preflight). Run says
// an interrupt came here (stageReady).
func (c *cell) ready(ctx context.Context) error {
	if t := c.p.WaitForModelTimeout; t != nil && *t > 0 {
		if err := c.waitForModel(ctx, time.Duration(*t*float64(time.Second))); err != nil {
			return err
		}
	}
	return preflight(ctx, c.p.Origins())
}

// maxProbeBody bounds a /v1/models reply read by the probe.
const maxProbeBody = 4 << 20

// probeHTTP sends the /v1/models probes; like the inference client it
// ignores HTTP(S)_PROXY.
var probeHTTP = &http.Client{Transport: &http.Transport{}, CheckRedirect: redirect.Check}

// waitForModel probes every --wait-for-model-interval, for up to timeout,
// until one probe of the --wait-for-model-mode passes: models (the model
// list of every --url, its base path + /v1/models, lists every --model), inference (a one-token
// request of the endpoint type to every --url succeeds) or both, in that
// order. Nothing of the probe is recorded. A server still not ready fails
// the run before the reset hook and any load, saying why.
func (c *cell) waitForModel(ctx context.Context, timeout time.Duration) error {
	interval := time.Duration(plan.DefaultWaitForModelInterval * float64(time.Second))
	if c.p.WaitForModelInterval != nil {
		interval = time.Duration(*c.p.WaitForModelInterval * float64(time.Second))
	}
	start := time.Now()
	deadline := start.Add(timeout)
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	client := endpoint.New(endpoint.Options{
		MaxConns: 1, MaxEventBytes: c.p.EventLimit(), Headers: requestHeaders(c.p, c.o.Version),
		Timeout: time.Duration(c.p.RequestTimeoutSeconds * float64(time.Second)), Secrets: c.p.Secrets(), Sign: c.sign,
	})
	defer client.Close()
	mode := c.p.WaitForModelMode
	fmt.Fprintf(c.log, "waiting up to %s for the model to be ready (%s probe every %s)\n", timeout, mode, interval)
	timer := time.NewTimer(0)
	defer timer.Stop()
	var last error // the last probe's failure, if not cut by the deadline
	for attempt := 1; ; attempt++ {
		select {
		case <-timer.C:
		case <-ctx.Done(): // a Ctrl-C between probes stops the wait at once
			return fmt.Errorf("wait for the model: %w", ctx.Err())
		}
		err := c.probe(pctx, client, mode)
		if err != nil && (pctx.Err() == nil || last == nil) {
			last = err
		}
		if err == nil {
			fmt.Fprintf(c.log, "model ready after %.1f s (%d probe(s))\n", time.Since(start).Seconds(), attempt)
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("wait for the model: %w", ctx.Err())
		}
		next := time.Until(deadline)
		if pctx.Err() != nil || next <= 0 {
			return fmt.Errorf("the model was not ready after %s (--wait-for-model-timeout), %d probe(s); the last: %w (no load was sent)",
				timeout, attempt, last)
		}
		timer.Reset(min(interval, next))
	}
}

// probe runs one readiness check of mode.
func (c *cell) probe(ctx context.Context, client *endpoint.Client, mode string) error {
	if mode == plan.WaitModels || mode == plan.WaitBoth {
		for _, u := range c.p.ModelsURLs() {
			if err := c.probeModels(ctx, u); err != nil {
				return err
			}
		}
	}
	if mode == plan.WaitInference || mode == plan.WaitBoth || mode == "" {
		for _, u := range c.p.RequestURLs() {
			if err := c.probeInference(ctx, client, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// probeModels passes when GET url (a --url's model list, plan's
// ModelsURLs: its base path, path parameters and query kept) answers 200
// with a model list naming every --model. Its errors show url redacted.
func (c *cell) probeModels(ctx context.Context, url string) error {
	shown := "GET " + c.p.Redactor().Redact(url)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("build the %s probe: %w", plan.ModelsPath, err)
	}
	req.Header = controlHeaders(c.p)
	if c.sign != nil {
		if err := c.sign(req, nil); err != nil {
			return fmt.Errorf("%s: sign the probe: %w", shown, err)
		}
	}
	resp, err := probeHTTP.Do(req)
	if err != nil {
		var uerr interface{ Unwrap() error }
		if errors.As(err, &uerr) { // *url.Error: drop the URL, keep the cause
			err = uerr.Unwrap()
		}
		return fmt.Errorf("%s: %w", shown, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if err != nil {
		return fmt.Errorf("%s: read the reply: %w", shown, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", shown, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		return fmt.Errorf("%s: not a model list", shown)
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	for _, m := range c.p.Model {
		if !slices.Contains(ids, m) {
			return fmt.Errorf("%s: %q is not listed (listed: %s)", shown, m, termsafe.Text(strings.Join(ids, ", ")))
		}
	}
	return nil
}

// The files the inference probe uploads: audio_transcription's audio, 0.1 s
// of quiet noise (the synthetic audio's), 16 kHz mono 16-bit PCM; and
// image_edit's reference image and image_retrieval's image, a grey 64×64
// PNG.
var (
	probeAudio = mustMedia(media.Audio, media.NoiseWAV(rand.New(rand.NewPCG(0, 0)), 1600, 16000, 1, 16))
	probeImage = mustMedia(media.Image, greyPNG(64))
)

// mustMedia is b as a media item; b is built here, so an error is a bug.
func mustMedia(kind media.Kind, b []byte) media.Item {
	it, err := media.FromBytes(kind, b)
	if err != nil {
		panic(fmt.Sprintf("the probe's %s: %v", kind, err))
	}
	return it
}

// greyPNG is a mid-grey side×side PNG.
func greyPNG(side int) []byte {
	img := image.NewGray(image.Rect(0, 0, side, side))
	for i := range img.Pix {
		img.Pix[i] = 128
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // a write to memory
	}
	return buf.Bytes()
}

// probeInference passes when a one-token request of the endpoint type to
// url, for the first --model, gets a valid successful reply.
func (c *cell) probeInference(ctx context.Context, client *endpoint.Client, url string) error {
	tmpl, field := c.p.Template()
	req := endpoint.Request{
		URL: url, EndpointType: c.p.EndpointType, Model: c.p.Model[0], Prompt: "Hello", Query: "Hello",
		Passages: []string{"Hello"}, Streaming: c.p.Streams(), Extra: c.p.BodyExtras(), Template: tmpl, ResponseField: field,
	}
	if c.p.Spec().Tokens {
		req.MaxTokens = 1
	}
	switch c.p.EndpointType { // these upload a file, or the server refuses the request
	case plan.EndpointAudioTranscription:
		req.Media = []media.Item{probeAudio}
	case plan.EndpointImageEdit, plan.EndpointImageRetrieval:
		req.Media = []media.Item{probeImage}
	}
	if resp := client.Do(ctx, req); resp.Err != nil {
		return fmt.Errorf("a one-token %s request to %s failed: %s", c.p.EndpointType, plan.RedactURL(url), termsafe.Text(resp.Err.Message))
	}
	return nil
}
