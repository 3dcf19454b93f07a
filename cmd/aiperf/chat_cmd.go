package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/chat"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// ChatCmd is aiperf chat: AIPerf's interactive sanity check of an
// endpoint, a message at a time, each reply followed by its TTFT, TPS, ITL
// and prompt-cache hit rate (package chat).
type ChatCmd struct {
	Model        string  `short:"m" required:"" placeholder:"NAME" help:"Model name served by the endpoint."`
	URL          string  `short:"u" default:"http://localhost:8000" placeholder:"URL" help:"Base URL of the OpenAI-compatible server, as aiperf profile's --url; /v1/chat/completions is appended (default ${default})."`
	SystemPrompt string  `name:"system-prompt" placeholder:"TEXT" help:"System prompt sent first in every turn."`
	Quick        *string `short:"q" placeholder:"MESSAGE" help:"Send one message, print the reply and its figures, and exit."`
	History      bool    `negatable:"" default:"true" help:"Resend the conversation every turn (default); --no-history sends each message as a stateless request. Ignored with --quick."`
	APIKey       string  `name:"api-key" env:"OPENAI_API_KEY" placeholder:"KEY" help:"API key sent as a Bearer token; never printed."`
	Tokenizer    string  `placeholder:"NAME|PATH" help:"Tokenizer of the client's token counts, as aiperf profile's --tokenizer (default o200k_base; builtin is the same)."`
}

// Timeouts of a turn, in seconds (AIPerf's names and defaults).
const (
	envChatConnect = "AIPERF_CHAT_CONNECT_TIMEOUT"
	envChatRead    = "AIPERF_CHAT_READ_TIMEOUT"
)

// Run chats until the input ends, or sends the one --quick message.
func (c *ChatCmd) Run(ctx context.Context, g *Globals) error {
	cfg, err := c.config()
	if err != nil {
		return usageErr(err)
	}
	if c.Quick != nil && strings.TrimSpace(*c.Quick) == "" {
		return usageErr(errors.New("--quick: the message is empty: give the text to send"))
	}
	err = chat.Run(ctx, cfg, c.Quick, os.Stdin, g.Stdout, g.Stderr)
	var failed *chat.FailedTurns
	var output *chat.OutputError
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, chat.ErrLongLine):
		return usageErr(err)
	case errors.As(err, &failed), errors.As(err, &output):
		return withCode(ExitFailure, err)
	case c.Quick != nil:
		return fmt.Errorf("request failed: %w", err)
	}
	return err
}

// config checks the flags and the environment's timeouts and loads the
// tokenizer: every problem is named before anything is sent.
func (c *ChatCmd) config() (chat.Config, error) {
	cfg := chat.Config{Model: strings.TrimSpace(c.Model), SystemPrompt: c.SystemPrompt, NoHistory: !c.History,
		APIKey: strings.TrimSpace(c.APIKey), Version: version}
	if cfg.Model == "" {
		return cfg, errors.New("--model is empty: name the model the server serves (its /v1/models lists them)")
	}
	var err error
	if cfg.URL, err = chat.ChatURL(c.URL); err != nil {
		return cfg, err
	}
	if err = chat.CheckAPIKey(cfg.APIKey); err != nil {
		return cfg, err
	}
	if cfg.ConnectTimeout, err = envSeconds(envChatConnect, chat.DefaultConnectTimeout); err != nil {
		return cfg, err
	}
	if cfg.ReadTimeout, err = envSeconds(envChatRead, chat.DefaultReadTimeout); err != nil {
		return cfg, err
	}
	if cfg.Tokenizer, err = tokenizer.Load(c.Tokenizer); err != nil {
		return cfg, fmt.Errorf("--tokenizer: %w", err)
	}
	return cfg, nil
}

// minTimeout is the shortest timeout a variable may set: a shorter one
// would be no bound (a zero Duration is the default) or none that holds.
const minTimeout = time.Millisecond

// envSeconds is the duration the environment variable name gives in
// seconds, def when it is unset or empty.
func envSeconds(name string, def time.Duration) (time.Duration, error) {
	raw := strings.TrimSpace(os.Getenv(name))
	if raw == "" {
		return def, nil
	}
	s, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(s) || s*float64(time.Second) < float64(minTimeout) || s > 1e6 {
		return 0, fmt.Errorf("%s=%q: give seconds, a number from %g to 1000000 (default %g)",
			name, raw, minTimeout.Seconds(), def.Seconds())
	}
	return time.Duration(s * float64(time.Second)), nil
}
