package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// errPromptShape is the error for a prompt or content value of no known shape.
var errPromptShape = errors.New("expected a string, an array of strings or content parts, or token ids")

// promptSegments returns the request's prompt as token segments (see
// blocks.go) and its token count: chat, every message's content in order,
// marked with its role; completions, the prompt (text or token ids).
func (s *Server) promptSegments(ep endpoint, req *completionRequest) ([]segment, int, error) {
	var segs []segment
	var err error
	if !ep.chat {
		if len(req.Prompt) == 0 {
			return nil, 0, errors.New("prompt is required")
		}
		if sh := shape(req.Prompt); (sh == shapeStrings || sh == shapeBatches) && listLen(req.Prompt, 1) > 1 {
			return nil, 0, errors.New("prompt must be one prompt: the mock returns one choice per request, got a list of several " +
				"(a string or token-id list each; send them as requests of their own)")
		}
		if segs, err = s.rawSegments(req.Prompt, 0, nil); err != nil {
			var re *requestError
			if errors.As(err, &re) {
				return nil, 0, err
			}
			return nil, 0, fmt.Errorf("prompt: %w", err)
		}
	} else {
		if len(req.Messages) == 0 {
			return nil, 0, errors.New("messages is required")
		}
		for i, m := range req.Messages {
			if segs, err = s.rawSegments(m.Content, roleTag(m.Role), segs); err != nil {
				return nil, 0, fmt.Errorf("messages[%d].content: %w", i, err)
			}
		}
	}
	n := segmentTokens(segs)
	if n == 0 && !ep.chat { // a chat prompt always has its template's tokens in vLLM
		return nil, 0, vllmError("The decoder prompt cannot be empty")
	}
	return segs, n, nil
}

// rawSegments appends the segments of a JSON prompt or content value to
// segs: a string, an array of strings, an array of content parts
// ({"text": ...}), an array of token ids, or an array of such arrays; null
// has no tokens. tag marks the value's first segment. The shape is read
// from the value's first bytes, so it is decoded once.
func (s *Server) rawSegments(raw json.RawMessage, tag uint64, segs []segment) ([]segment, error) {
	text := func(t string) {
		segs = append(segs, segment{ids: s.tokens.ids(t), tag: tag})
		tag = 0
	}
	ids := func(batch []int) {
		out := make([]uint32, len(batch))
		for i, id := range batch {
			out[i] = uint32(id)
		}
		segs = append(segs, segment{ids: out, tag: tag})
		tag = 0
	}
	var err error
	switch shape(raw) {
	case shapeNull, shapeEmpty: // no tokens
	case shapeString:
		var t string
		if err = json.Unmarshal(raw, &t); err == nil {
			text(t)
		}
	case shapeStrings:
		var ts []string
		if err = json.Unmarshal(raw, &ts); err == nil {
			for _, t := range ts {
				text(t)
			}
		}
	case shapeParts:
		media := func(got []uint32) {
			segs = append(segs, segment{ids: got, tag: tag})
			tag = 0
		}
		if perr := s.partsSegments(raw, text, media); perr != nil {
			return nil, perr
		}
	case shapeIDs:
		var batch []int
		if err = json.Unmarshal(raw, &batch); err == nil {
			if verr := checkIDs(batch); verr != nil {
				return nil, verr
			}
			ids(batch)
		}
	case shapeBatches:
		var batches [][]int
		if err = json.Unmarshal(raw, &batches); err == nil {
			for _, b := range batches {
				if verr := checkIDs(b); verr != nil {
					return nil, verr
				}
				ids(b)
			}
		}
	default:
		return nil, errPromptShape
	}
	if err != nil {
		return nil, errPromptShape
	}
	if tag != 0 { // no tokens: the mark passes to the next message
		segs = append(segs, segment{tag: tag})
	}
	return segs, nil
}

// checkIDs refuses token ids no vocabulary holds: negative ones, or ones
// past 32 bits (the mock keeps ids as uint32), with vLLM's message.
func checkIDs(batch []int) error {
	for _, id := range batch {
		if id < 0 || id > math.MaxUint32 {
			return vllmError(fmt.Sprintf("Token id %d is out of vocabulary", id))
		}
	}
	return nil
}

// The JSON shapes of a prompt or content value.
const (
	shapeOther   = iota
	shapeNull    // null
	shapeString  // "..."
	shapeEmpty   // []
	shapeStrings // ["...", ...]
	shapeParts   // [{...}, ...]
	shapeIDs     // [1, ...]
	shapeBatches // [[...], ...]
)

// shape classifies a JSON value by its first bytes (the body has already
// been checked to be valid JSON).
func shape(raw []byte) int {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return shapeOther
	}
	switch raw[0] {
	case 'n':
		return shapeNull
	case '"':
		return shapeString
	case '[':
		rest := bytes.TrimLeft(raw[1:], " \t\r\n")
		switch {
		case len(rest) == 0:
		case rest[0] == ']':
			return shapeEmpty
		case rest[0] == '"':
			return shapeStrings
		case rest[0] == '{':
			return shapeParts
		case rest[0] == '[':
			return shapeBatches
		case rest[0] == '-' || rest[0] >= '0' && rest[0] <= '9':
			return shapeIDs
		}
	}
	return shapeOther
}

// listLen is the number of items of a JSON list, counted no further than
// limit+1, so a long list costs no more than its first items; a value
// that is not a list has none.
func listLen(raw json.RawMessage, limit int) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return 0
	}
	n := 0
	for ; n <= limit && dec.More(); n++ {
		var item json.RawMessage
		if dec.Decode(&item) != nil {
			break
		}
	}
	return n
}
