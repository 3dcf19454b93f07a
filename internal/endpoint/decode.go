package endpoint

import (
	"encoding/json"
	"errors"
)

// The read loop decodes every streamed chunk, so it uses this scanner instead
// of encoding/json, which costs ~5 µs and 11 allocations per vLLM-sized
// chunk. It reads only the fields of wireChunk and skips everything else
// without validating it. Where the input is valid JSON that encoding/json
// accepts, the result is the same as json.Unmarshal into wireChunk (key
// case-folding, escapes, invalid UTF-8 and null handling included); this is
// checked by FuzzDecodeChunk. The rare usage object is handed to
// encoding/json.

var errSyntax = errors.New("decode response chunk: invalid JSON")

// decodeChunk decodes one JSON response object into w, which must be zero or
// reset.
func decodeChunk(data []byte, w *wireChunk) error {
	s := scanner{b: data}
	return s.chunk(w)
}

// decodeTransient is decodeChunk without allocating the strings it reads:
// w's strings alias data or *scratch (reused: emptied first), so they are
// valid only while data is unchanged and until the next decodeTransient
// with the same scratch. The read loop decodes every streamed chunk this
// way and copies the text it keeps (Response.appendChunk).
func decodeTransient(data []byte, w *wireChunk, scratch *[]byte) error {
	*scratch = (*scratch)[:0]
	s := scanner{b: data, scratch: scratch}
	return s.chunk(w)
}

// decodeStreamed is decodeTransient leaving the usage object undecoded:
// w.usageRaw aliases its bytes in data, and w.Usage stays nil. A stream
// whose every chunk carries usage (--per-chunk-usage) is decoded this way,
// its usage decoded once at its end (chunkUsage).
func decodeStreamed(data []byte, w *wireChunk, scratch *[]byte) error {
	*scratch = (*scratch)[:0]
	s := scanner{b: data, scratch: scratch, rawUsage: true}
	return s.chunk(w)
}

// chunk reads a response object into w.
func (s *scanner) chunk(w *wireChunk) error {
	err := s.object(func(key []byte) error {
		switch {
		case keyIs(key, "choices"):
			return s.choices(w)
		case keyIs(key, "usage"):
			return s.usage(w)
		case keyIs(key, "metrics"):
			return s.metrics(w)
		case keyIs(key, "error"):
			raw, err := s.skip()
			w.Error = append(w.Error[:0], raw...)
			return err
		case keyIs(key, "object"):
			raw, err := s.skip()
			w.errorObject = string(raw) == `"error"`
			return err
		}
		_, err := s.skip()
		return err
	})
	if err != nil {
		return err
	}
	if s.ws(); s.i != len(s.b) {
		return errSyntax
	}
	return nil
}

// choices reads the choices array into w.Choices, reusing its backing
// array the way encoding/json does: an element already there (from an
// earlier "choices" key of the same object) is decoded into, not cleared.
func (s *scanner) choices(w *wireChunk) error {
	if s.null() {
		w.Choices, w.hasChoices = nil, false
		return nil
	}
	n, err := s.array(func(i int) error {
		if i >= cap(w.Choices) {
			w.Choices = append(w.Choices[:cap(w.Choices)], wireChoice{})
		}
		w.Choices = w.Choices[:i+1]
		return s.choice(&w.Choices[i])
	})
	if err != nil {
		return err
	}
	w.Choices, w.hasChoices = w.Choices[:n], true
	return nil
}

func (s *scanner) choice(c *wireChoice) error {
	if s.null() {
		return nil
	}
	return s.object(func(key []byte) error {
		switch {
		case keyIs(key, "index"):
			raw, err := s.skip()
			if err == nil {
				err = c.Index.UnmarshalJSON(raw)
			}
			return err
		case keyIs(key, "text"):
			if s.null() {
				c.has |= nullText
				return nil
			}
			c.has |= hasText
			return s.text(&c.Text)
		case keyIs(key, "delta"):
			if s.null() {
				c.has |= nullDelta
				return nil
			}
			c.has |= hasDelta
			return s.message(&c.Delta)
		case keyIs(key, "message"):
			if s.null() {
				c.has |= nullMessage
				return nil
			}
			c.has |= hasMessage
			return s.message(&c.Message)
		case keyIs(key, "finish_reason"):
			// Whether it is a non-empty string matters (null: not
			// finished), and whether it says the server gave up: "abort"
			// or "error" (vLLM), or an object of that type (SGLang); a
			// value of another type is skipped, not refused.
			raw, err := s.skip()
			c.has &^= finished | aborted
			if err == nil && len(raw) > 2 && raw[0] == '"' {
				c.has |= finished
			}
			if err == nil && abortReason(raw) {
				c.has |= finished | aborted
				c.reason = append(c.reason[:0], raw...)
			}
			return err
		}
		_, err := s.skip()
		return err
	})
}

func (s *scanner) message(m *wireMessage) error {
	if s.null() {
		return nil
	}
	return s.object(func(key []byte) error {
		switch {
		case keyIs(key, "content"):
			return s.text(&m.Content)
		case keyIs(key, "reasoning_content"):
			return s.text(&m.ReasoningContent)
		case keyIs(key, "reasoning"):
			return s.text(&m.Reasoning)
		case keyIs(key, "tool_calls"):
			return s.toolCalls(m)
		}
		_, err := s.skip()
		return err
	})
}

func (s *scanner) toolCalls(m *wireMessage) error {
	if s.null() {
		m.ToolCalls = nil
		return nil
	}
	n, err := s.array(func(i int) error {
		if i >= cap(m.ToolCalls) {
			m.ToolCalls = append(m.ToolCalls[:cap(m.ToolCalls)], make([]toolCall, i+1-cap(m.ToolCalls))...)
		}
		m.ToolCalls = m.ToolCalls[:i+1]
		tc := &m.ToolCalls[i]
		if s.null() {
			return nil
		}
		return s.object(func(key []byte) error {
			if !keyIs(key, "function") {
				_, err := s.skip()
				return err
			}
			if s.null() {
				return nil
			}
			return s.object(func(key []byte) error {
				switch {
				case keyIs(key, "name"):
					return s.text(&tc.Function.Name)
				case keyIs(key, "arguments"):
					return s.text(&tc.Function.Arguments)
				}
				_, err := s.skip()
				return err
			})
		})
	})
	m.ToolCalls = m.ToolCalls[:min(n, len(m.ToolCalls))]
	return err
}

func (s *scanner) usage(w *wireChunk) error {
	if s.null() {
		w.Usage, w.usageRaw = nil, nil
		return nil
	}
	raw, err := s.skip()
	if err != nil {
		return err
	}
	if s.rawUsage {
		w.usageRaw = raw
		return nil
	}
	w.Usage = new(wireUsage)
	if json.Unmarshal(raw, w.Usage) != nil {
		// Counts of the wrong shape are described, not a reason to drop
		// the chunk: the response is still measured.
		*w.Usage = wireUsage{malformed: true}
	}
	return nil
}

// metrics reads the rare root "metrics" object (vLLM's per-request
// metrics) with encoding/json, as json.Unmarshal would into the chunk:
// null empties it, an object's members update it.
func (s *scanner) metrics(w *wireChunk) error {
	if s.null() {
		w.Metrics = nil
		return nil
	}
	raw, err := s.skip()
	if err != nil {
		return err
	}
	if w.Metrics == nil {
		w.Metrics = new(wireMetrics)
	}
	if json.Unmarshal(raw, w.Metrics) != nil {
		w.Metrics = nil // not an object: no acceptance (json.Unmarshal would refuse the chunk)
	}
	return nil
}

// abortReason reports a finish_reason that says the server gave the
// generation up rather than finished it: "abort" or "error" (vLLM's
// FinishReason), or an object whose "type" is one of them (SGLang's
// {"type": "abort", "message": …}).
func abortReason(raw []byte) bool {
	switch string(raw) {
	case `"abort"`, `"error"`:
		return true
	}
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var o struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(raw, &o) == nil && (o.Type == "abort" || o.Type == "error")
}
