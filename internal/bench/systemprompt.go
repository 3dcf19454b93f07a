package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// maxSystemPromptBytes bounds --system-prompt-file: a production system
// prompt of a hundred thousand tokens is well under it.
const maxSystemPromptBytes = 16 << 20

// systemJoin separates --system-prompt from a dataset's own system message
// (AIPerf's SYSTEM_PROMPT_JOIN_SEP): one message, as many servers mishandle
// two system messages.
const systemJoin = "\n\n"

// readSystemPrompt returns the verbatim system prompt of p: --system-prompt,
// or the whole text of --system-prompt-file as it is (not trimmed), read
// once for the cell; "" for none.
func readSystemPrompt(p plan.Profile) (string, error) {
	if p.SystemPromptFile == "" {
		return p.SystemPrompt, nil
	}
	b, err := inputfile.ReadFileMax(p.SystemPromptFile, maxSystemPromptBytes)
	var big *inputfile.TooLargeError
	switch {
	case errors.As(err, &big):
		return "", fmt.Errorf("--system-prompt-file %s: larger than %d MiB: a system prompt is sent in every request, give a shorter one",
			p.SystemPromptFile, maxSystemPromptBytes>>20)
	case err != nil:
		return "", fmt.Errorf("--system-prompt-file: %w", err)
	case !utf8.Valid(b):
		return "", fmt.Errorf("--system-prompt-file %s: not UTF-8 text: convert it (iconv -t UTF-8)", p.SystemPromptFile)
	case strings.TrimSpace(string(b)) == "":
		return "", fmt.Errorf("--system-prompt-file %s: empty or whitespace only: omit the option to run without a system prompt", p.SystemPromptFile)
	}
	return string(b), nil
}

// addSystemPrompt puts text before conversation c's own system message, as
// AIPerf does: c.System for text turns (sent first in each request); for a
// turn whose messages are sent as they are, merged into its leading system
// message or sent before them as one (the first turn only when the
// conversation's later turns extend its messages). Turns are copied before
// they change: c's may be the dataset's own. A payload sent as it is cannot
// carry it: an error.
func addSystemPrompt(c *dataset.Conversation, text string, count func(string) int) error {
	c.System = joinSystem(text, c.System)
	copied := false
	for i := range c.Turns {
		t := &c.Turns[i]
		if len(t.Payload) > 0 {
			return fmt.Errorf("conversation %s sends its request bodies as they are (payload records): "+
				"--system-prompt cannot be added to them; remove it, or give the records as messages", c.ID)
		}
		if len(t.Messages) == 0 || i > 0 && c.Mode == dataset.DeltasWithoutResponses {
			continue
		}
		msgs, err := mergeSystem(t.Messages, text)
		if err != nil {
			return fmt.Errorf("conversation %s, turn %d: %w", c.ID, i, err)
		}
		if !copied {
			c.Turns, copied = append([]dataset.Turn(nil), c.Turns...), true
			t = &c.Turns[i]
		}
		t.Messages = msgs
		t.InputTokens += count(text)
	}
	return nil
}

// joinSystem is text before a system message's own, or text alone.
func joinSystem(text, own string) string {
	if own == "" {
		return text
	}
	return text + systemJoin + own
}

// mergeSystem returns the messages array raw with text in its leading
// system message (before a string content, or as a first text part of a
// list), or with a system message of text before them.
func mergeSystem(raw json.RawMessage, text string) (json.RawMessage, error) {
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("read its messages to add --system-prompt: %w", err)
	}
	if len(msgs) > 0 && string(msgs[0]["role"]) == `"system"` {
		first := make(map[string]json.RawMessage, len(msgs[0]))
		for k, v := range msgs[0] {
			first[k] = v
		}
		content, err := systemContent(first["content"], text)
		if err != nil {
			return nil, err
		}
		first["content"] = content
		msgs[0] = first
	} else {
		content, _ := json.Marshal(text)
		role, _ := json.Marshal("system")
		msgs = append([]map[string]json.RawMessage{{"role": role, "content": content}}, msgs...)
	}
	return json.Marshal(msgs)
}

// systemContent is a system message's content with text before it: before
// a string, as a first text part of a list, alone for none.
func systemContent(content json.RawMessage, text string) (json.RawMessage, error) {
	var s string
	var parts []json.RawMessage
	switch c := strings.TrimSpace(string(content)); {
	case c == "" || c == "null":
		return json.Marshal(text)
	case json.Unmarshal(content, &s) == nil:
		return json.Marshal(joinSystem(text, s))
	case json.Unmarshal(content, &parts) == nil:
		part, err := json.Marshal(map[string]string{"type": "text", "text": text})
		if err != nil {
			return nil, err
		}
		return json.Marshal(append([]json.RawMessage{part}, parts...))
	}
	return nil, errors.New("its system message's content is neither text nor a list of parts: --system-prompt cannot be added to it")
}

// load reads the session's conversation and adds --system-prompt to it.
func (s *session) load() {
	if s.src.tree != nil { // a branch's conversation is a node past the roots
		s.c, s.err = s.src.tree.Node(s.conv)
	} else {
		s.c, s.err = s.src.ds.Conversation(s.conv)
	}
	s.loaded = true
	if s.err == nil && s.src.systemPrompt != "" {
		s.err = addSystemPrompt(&s.c, s.src.systemPrompt, s.src.system)
	}
}

// checkSystemPrompt refuses, before any traffic, --system-prompt on data
// that cannot carry it: a conversation with payload records, or a messages
// array it cannot be merged into. Every conversation is looked at (read
// again: one pass over the input, only with --system-prompt).
func (c *cell) checkSystemPrompt(ctx context.Context) error {
	if c.systemPrompt == "" {
		return nil
	}
	return eachConversation(ctx, c.ds, func(conv *dataset.Conversation) error {
		if err := addSystemPrompt(conv, c.systemPrompt, func(string) int { return 0 }); err != nil {
			return fmt.Errorf("%w (nothing was sent)", err)
		}
		return nil
	})
}
