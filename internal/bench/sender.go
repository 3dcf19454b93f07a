package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/openai"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// newSender builds the per-request function: pick a prompt (shuffled,
// seeded), a URL and a model (round-robin), send, keep the output text for
// counting after the run.
func newSender(p plan.Profile, counts *outputCounts, client *openai.Client, entries []dataset.Entry) load.Sender {
	urls := p.RequestURLs()
	sampler := dataset.NewSampler(len(entries), p.RandomSeed)
	extra := map[string]any{}
	for _, e := range p.ExtraInputs {
		m, _ := plan.ParseExtraInput(e) // validated already
		for k, v := range m {
			extra[k] = v
		}
	}
	idPrefix := newID()[:8]
	// Bodies depend only on the prompt and the model: encode each once, off
	// the path between a request's scheduled time and its send on repeats.
	bodies := make([]atomic.Pointer[[]byte], len(entries)*len(p.Model))
	return func(ctx context.Context, c load.Credit) metrics.Record {
		prompt := sampler.Next()
		e := entries[prompt]
		u := c.Index % len(urls)
		model := c.Index % len(p.Model)
		req := openai.Request{
			URL:          urls[u],
			EndpointType: p.EndpointType,
			Model:        p.Model[model],
			Prompt:       e.Prompt,
			MaxTokens:    e.MaxTokens,
			Streaming:    p.Streaming,
			Extra:        extra,
			RequestID:    fmt.Sprintf("%s-%06d", idPrefix, c.Index),
		}
		slot := &bodies[prompt*len(p.Model)+model]
		if b := slot.Load(); b != nil {
			req.Body = *b
		} else if b, err := openai.Body(req); err == nil { // an error is reported by Do
			req.Body = b
			slot.Store(&b)
		}
		resp := client.Do(ctx, req)
		rec := metrics.Record{
			Index:                 c.Index,
			Phase:                 c.Phase.Name,
			PhaseKind:             c.Phase.Kind,
			Prompt:                prompt,
			RequestID:             req.RequestID,
			URL:                   u,
			Model:                 req.Model,
			Streaming:             p.Streaming,
			ScheduledNs:           c.ScheduledNs,
			SentNs:                resp.SentNs,
			EndNs:                 resp.EndNs,
			InputTokens:           e.InputTokens,
			RequestedOutputTokens: e.MaxTokens,
			Usage:                 resp.Usage,
			Status:                resp.Status,
			Error:                 resp.Err,
			Retried:               resp.Retried,
			MalformedChunks:       resp.MalformedChunks,
		}
		if len(resp.Chunks) > 0 {
			rec.ResponseNs = make([]int64, len(resp.Chunks))
			var text, reasoning strings.Builder
			for i, ch := range resp.Chunks {
				rec.ResponseNs[i] = ch.At
				if rec.FirstOutputNs == 0 && ch.Text != "" {
					rec.FirstOutputNs = ch.At
				}
				text.WriteString(ch.Text)
				reasoning.WriteString(ch.Reasoning)
			}
			counts.add(&rec, text.String(), reasoning.String())
		}
		return rec
	}
}

// preflight dials every origin once so an unreachable server is one clear
// line, not a stack of per-request timeouts.
func preflight(ctx context.Context, origins []string) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil {
			return fmt.Errorf("parse server url %q: %w", o, err)
		}
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
		if err != nil {
			return fmt.Errorf("server %s is unreachable: %w", o, err)
		}
		conn.Close()
	}
	return nil
}

// requestHeaders are the inference headers: user headers, auth, user agent.
func requestHeaders(p plan.Profile, version string) http.Header {
	h := controlHeaders(p)
	h.Set("User-Agent", "aiperf/"+version)
	return h
}

// controlHeaders are the headers control hooks send.
func controlHeaders(p plan.Profile) http.Header { return hooks.Headers(p) }
