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
// each byte of the reply must follow the previous one (or the request)
// within ReadTimeout. The secrets aiperf profile finds in the same --url
// and --api-key (the key, the URL's password and Basic credential, its
// secret query values) never reach the output, however a server echoes
// them: a reply is printed through profile's redactor, holding back just
// enough of its end to see a secret split across chunks (secretsafe.go).
package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/sse"
	"github.com/aiperf-go/aiperf/internal/termsafe"
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
	// and the wait for each byte of the reply (0: the defaults).
	ConnectTimeout, ReadTimeout time.Duration
	Version                     string // in the User-Agent
}

// Session is one conversation.
type Session struct {
	cfg     Config
	client  *endpoint.Client
	secrets []string       // aiperf profile's of the same --url and --api-key
	red     *plan.Redactor // and its redactor of them
	history []endpoint.Message
	// afterFunc starts a turn's stall timer (time.AfterFunc; a test's
	// own timer to see it restarted).
	afterFunc func(d time.Duration, f func()) stallTimer
}

// stallTimer is a turn's stall timer, a *time.Timer.
type stallTimer interface {
	Reset(d time.Duration) bool
	Stop() bool
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
	p := profileOf(cfg.URL, cfg.APIKey)
	secrets := p.Secrets()
	return &Session{
		cfg: cfg,
		client: endpoint.New(endpoint.Options{MaxConns: 1, Headers: h, ConnectTimeout: cfg.ConnectTimeout,
			MaxEventBytes: MaxReply, Now: func() int64 { return int64(time.Since(start)) }, Secrets: secrets}),
		secrets:   secrets,
		red:       p.Redactor(),
		afterFunc: func(d time.Duration, f func()) stallTimer { return time.AfterFunc(d, f) },
	}
}

// profileOf is a chat session's settings as aiperf profile's: its
// secrets (the API key, the URL's password, Basic credential and secret
// query values) and its checks of them are profile's.
func profileOf(rawURL, apiKey string) plan.Profile {
	return plan.Profile{URL: []string{rawURL}, APIKey: apiKey, Model: []string{"chat"},
		EndpointType: plan.EndpointChat, Streaming: true}
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

// errStalled is the cause of a turn cut for a reply byte that did not come.
var errStalled = errors.New("stalled")

// MaxReply bounds a reply: a response body, one SSE line or event, and a
// stream's text and chunks in all (the client's default bounds, which
// aiperf profile's --max-event-bytes changes and chat does not).
const MaxReply = sse.DefaultMaxEvent

// Send sends message as the next user turn, prints the reply to out as it
// streams, and returns the turn's figures. A failed request is an error
// (its message redacted) and leaves the history as it was; so is a reply
// with data lines that are not chunks of the API, though its text was
// printed. Every byte read restarts the ReadTimeout, chunks without text
// and a whole reply trickling in too.
func (s *Session) Send(ctx context.Context, message string, out io.Writer) (Turn, error) {
	msgs := s.messages(message)
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := s.afterFunc(s.cfg.ReadTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	printer := newSecretSafe(out, s.red, s.secrets...)
	chunks := 0
	req := endpoint.Request{URL: s.cfg.URL, EndpointType: plan.EndpointChat, Model: s.cfg.Model, Messages: msgs,
		Streaming: true, OnRead: func() { stall.Reset(s.cfg.ReadTimeout) },
		OnChunk: func(text, reasoning string) {
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
	if printer.flush() {
		fmt.Fprintln(out)
	}
	switch {
	case resp.Err != nil:
		return Turn{}, s.failure(rctx, resp.Err)
	case resp.MalformedChunks > 0:
		return Turn{}, fmt.Errorf("%s: %s", endpoint.ErrTypeInvalidResponse, malformed(resp.MalformedChunks))
	}
	t := s.measure(msgs, &resp, chunks > 0)
	if !s.cfg.NoHistory {
		s.history = append(s.history, endpoint.Message{Role: "user", Content: message},
			endpoint.Message{Role: "assistant", Content: t.Reply})
	}
	return t, nil
}

// malformed says that n data lines of a stream were not chunks of the API.
func malformed(n int) string {
	lines := "1 data line of the stream was"
	if n > 1 {
		lines = fmt.Sprintf("%d data lines of the stream were", n)
	}
	return lines + " not a chat completion chunk (skipped, so the reply printed may lack text): " +
		"the reply is not a valid response of the API"
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
// what the client classified, redacted (the client's message already is;
// this redactor also knows secret query values in any URL).
func (s *Session) failure(rctx context.Context, e *metrics.Error) error {
	switch cause := context.Cause(rctx); {
	case errors.Is(cause, errStalled):
		return fmt.Errorf("no reply byte within %s (AIPERF_CHAT_READ_TIMEOUT): the server stalled", s.cfg.ReadTimeout)
	case cause != nil:
		return cause
	}
	msg := termsafe.Text(s.red.Redact(strings.TrimSpace(e.Message)))
	switch {
	case e.Type == endpoint.ErrTypeTooLarge:
		msg = fmt.Sprintf("the reply is larger than aiperf chat reads: over %d MiB (a response body, one SSE line or event, "+
			"or a stream's text in all), a bound chat does not change: an endless stream?", MaxReply>>20)
	case e.Code == 401 || e.Code == 403:
		return fmt.Errorf("%s (HTTP %d): %s: %s", e.Type, e.Code, msg, s.refusedHint())
	case e.Code != 0:
		return fmt.Errorf("%s (HTTP %d): %s", e.Type, e.Code, msg)
	}
	return fmt.Errorf("%s: %s", e.Type, msg)
}

// refusedHint is what to do about a request the server refused for its
// credentials (HTTP 401 or 403): give a key when none was sent, else check
// the one that was.
func (s *Session) refusedHint() string {
	if !profileOf(s.cfg.URL, s.cfg.APIKey).CredentialsSent() {
		return "the server wants credentials and none were sent: give its API key with --api-key KEY (or $OPENAI_API_KEY)"
	}
	return "the server refused the credentials sent: check the key given with --api-key (or $OPENAI_API_KEY, " +
		"or the URL's user and password)"
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
// takes it and checks it (a port from 1 to 65535, a query without white
// space, ...): http:// added when it has no scheme, /v1/chat/completions
// appended without repeating the segments base ends with (a base ending
// in /v1, or the whole route, is used as it is).
func ChatURL(base string) (string, error) {
	p := profileOf(strings.TrimSpace(base), "")
	if err := refused(p, "url"); err != nil {
		return "", err
	}
	return p.RequestURLs()[0], nil
}

// CheckAPIKey checks --api-key as aiperf profile does: it must be
// sendable in an HTTP header.
func CheckAPIKey(key string) error { return refused(profileOf("http://localhost", key), "api_key") }

// refused is what aiperf profile's checks (plan.Profile.Check) find wrong
// with p's field, nil when nothing: the others are not chat's settings.
func refused(p plan.Profile, field string) error {
	var errs []error
	for _, fe := range plan.FieldErrors(p.Check()) {
		if fe.Field == field {
			errs = append(errs, fe)
		}
	}
	return errors.Join(errs...)
}
