// Package chat is aiperf chat (AIPerf's interactive sanity check): one
// conversation with an OpenAI-compatible chat endpoint, a message at a
// time. Each reply is printed as it streams and followed by its speed
// (TTFT, tokens per second, ITL and the decode rate, the prompt-cache hit
// rate), measured by the client aiperf profile uses and computed by the
// same metric definitions (metrics.Times), so the two agree.
//
// A session resends its history every turn unless NoHistory; a failed
// turn is reported and the conversation goes on without it. A turn has no
// overall deadline: a connection must be made within ConnectTimeout and
// each streamed chunk must follow the previous one (or the request) within
// ReadTimeout. The API key, and a server that echoes it, never reach the
// output: a reply is printed through a redactor that holds back just
// enough of its end to see a key split across chunks (secretsafe.go).
package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// Defaults of the timeouts (AIPerf's AIPERF_CHAT_CONNECT_TIMEOUT and
// AIPERF_CHAT_READ_TIMEOUT).
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultReadTimeout    = 300 * time.Second
)

// Config is a chat session's settings.
type Config struct {
	URL          string // the chat completions URL (see ChatURL)
	Model        string
	SystemPrompt string // sent first in every turn when not empty
	NoHistory    bool   // every turn a stateless request
	APIKey       string // sent as a Bearer token; redacted from everything printed
	Tokenizer    tokenizer.Tokenizer
	// ConnectTimeout and ReadTimeout bound a connection's establishment
	// and the wait for each streamed chunk (0: the defaults).
	ConnectTimeout, ReadTimeout time.Duration
	Version                     string // in the User-Agent
}

// Session is one conversation.
type Session struct {
	cfg     Config
	client  *endpoint.Client
	secrets *plan.Redactor
	history []endpoint.Message
}

// New opens a session; Close releases its connections.
func New(cfg Config) *Session {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	h := http.Header{}
	h.Set("User-Agent", "aiperf/"+cfg.Version)
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	start := time.Now()
	return &Session{
		cfg: cfg,
		client: endpoint.New(endpoint.Options{MaxConns: 1, Headers: h, ConnectTimeout: cfg.ConnectTimeout,
			Now: func() int64 { return int64(time.Since(start)) }, Secrets: []string{cfg.APIKey}}),
		secrets: plan.NewRedactor(cfg.APIKey),
	}
}

// Close closes the session's idle connections.
func (s *Session) Close() { s.client.Close() }

// Turn is one exchange as measured.
type Turn struct {
	Record metrics.Record // the request as aiperf profile records it
	// Streamed says the reply came as a stream (else it has no TTFT or ITL).
	Streamed bool
	Reply    string // the assistant's text kept in the history
}

// errStalled is the cause of a turn cut for a chunk that did not come.
var errStalled = errors.New("stalled")

// Send sends message as the next user turn, prints the reply to out as it
// streams, and returns the turn's figures. A failed request is an error
// (its message redacted) and leaves the history as it was.
func (s *Session) Send(ctx context.Context, message string, out io.Writer) (Turn, error) {
	msgs := s.messages(message)
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := time.AfterFunc(s.cfg.ReadTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	printer := newSecretSafe(out, s.secrets, s.cfg.APIKey)
	chunks := 0
	req := endpoint.Request{URL: s.cfg.URL, EndpointType: plan.EndpointChat, Model: s.cfg.Model, Messages: msgs,
		Streaming: true, OnChunk: func(text, reasoning string) {
			stall.Reset(s.cfg.ReadTimeout)
			chunks++
			printer.write(reasoning)
			printer.write(text)
		}}
	resp := s.client.Do(rctx, req)
	if chunks == 0 && resp.Err == nil { // a whole reply: printed once read
		text, reasoning := resp.Output()
		printer.write(reasoning)
		printer.write(text)
	}
	printed := printer.flush()
	if printed {
		fmt.Fprintln(out)
	}
	if resp.Err != nil {
		return Turn{}, s.failure(rctx, resp.Err)
	}
	t := s.measure(msgs, &resp, chunks > 0)
	if !s.cfg.NoHistory {
		s.history = append(s.history, endpoint.Message{Role: "user", Content: message},
			endpoint.Message{Role: "assistant", Content: t.Reply})
	}
	return t, nil
}

// messages are the turn's messages: the system prompt, the history, the
// new user message.
func (s *Session) messages(message string) []endpoint.Message {
	var msgs []endpoint.Message
	if s.cfg.SystemPrompt != "" {
		msgs = append(msgs, endpoint.Message{Role: "system", Content: s.cfg.SystemPrompt})
	}
	msgs = append(msgs, s.history...)
	return append(msgs, endpoint.Message{Role: "user", Content: message})
}

// failure is the error of a failed request: a stall, an interrupt, or
// what the client classified (its message already redacted).
func (s *Session) failure(rctx context.Context, e *metrics.Error) error {
	switch cause := context.Cause(rctx); {
	case errors.Is(cause, errStalled):
		return fmt.Errorf("no reply chunk within %s (AIPERF_CHAT_READ_TIMEOUT): the server stalled", s.cfg.ReadTimeout)
	case cause != nil:
		return cause
	}
	msg := strings.TrimSpace(e.Message)
	if e.Code != 0 {
		return fmt.Errorf("%s (HTTP %d): %s", e.Type, e.Code, msg)
	}
	return fmt.Errorf("%s: %s", e.Type, msg)
}

// measure makes the turn's record as aiperf profile does: the reply's
// stamps, the client's token counts of the prompt and the reply, and the
// server's usage judged against them.
func (s *Session) measure(msgs []endpoint.Message, resp *endpoint.Response, streamed bool) Turn {
	text, reasoning := resp.Output()
	r := metrics.Record{Model: s.cfg.Model, Streaming: true, SentNs: resp.SentNs, EndNs: resp.EndNs,
		Status: resp.Status, Usage: resp.Usage}
	r.ResponseNs = metrics.StampsFrom(len(resp.Chunks), func(i int) int64 { return resp.Chunks[i].At })
	for _, ch := range resp.Chunks {
		if ch.Text != "" {
			r.FirstOutputNs = ch.At
			break
		}
	}
	for _, m := range msgs {
		r.InputTokens += s.cfg.Tokenizer.Count(m.Content)
	}
	r.OutputTokens = s.cfg.Tokenizer.Count(text)
	r.ReasoningTokens = s.cfg.Tokenizer.Count(reasoning)
	metrics.CheckUsage(&r)
	metrics.CheckReceived(&r, len(text), len(reasoning))
	reply := text
	if strings.TrimSpace(reply) == "" { // a reasoning-only reply is kept as its reasoning
		reply = reasoning
	}
	return Turn{Record: r, Streamed: streamed, Reply: reply}
}

// ChatURL is the chat completions URL of base, a --url as aiperf profile
// takes it: http:// added when it has no scheme, /v1/chat/completions
// appended without repeating the segments base ends with (a base ending
// in /v1, or the whole route, is used as it is).
func ChatURL(base string) (string, error) {
	u, err := url.Parse(plan.NormalizeURL(strings.TrimSpace(base)))
	shown := plan.RedactURL(base)
	var uerr *url.Error
	switch {
	case errors.As(err, &uerr): // its message holds the URL, password and all
		return "", fmt.Errorf("--url %q: %w", shown, uerr.Err)
	case err != nil:
		return "", fmt.Errorf("--url %q: %w", shown, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("--url %q: the scheme must be http or https", shown)
	case u.Host == "":
		return "", fmt.Errorf("--url %q: no host", shown)
	}
	p := plan.Profile{URL: []string{strings.TrimSpace(base)}, EndpointType: plan.EndpointChat, Streaming: true}
	return p.RequestURLs()[0], nil
}
