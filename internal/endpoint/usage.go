package endpoint

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// wireUsage is the usage object, with the vendor synonyms AIPerf reads
// (its Usage model): cached prompt tokens nested under
// prompt_tokens_details or input_tokens_details (OpenAI, vLLM, SGLang,
// TRT-LLM), or top-level as cache_read_input_tokens (Anthropic) or
// prompt_cache_hit_tokens (DeepSeek); cache writes as
// cache_creation_input_tokens (Anthropic), misses as
// prompt_cache_miss_tokens (DeepSeek). Its counts are read leniently
// (usageCount never fails), so that a server reporting nonsense still has
// its response measured, with the nonsense described instead of trusted.
type wireUsage struct {
	PromptTokens            usageCount         `json:"prompt_tokens"`
	CompletionTokens        usageCount         `json:"completion_tokens"`
	TotalTokens             usageCount         `json:"total_tokens"`
	PromptTokensDetails     *promptDetails     `json:"prompt_tokens_details"`
	InputTokensDetails      *promptDetails     `json:"input_tokens_details"`
	CompletionTokensDetails *completionDetails `json:"completion_tokens_details"`
	CacheReadInputTokens    usageCount         `json:"cache_read_input_tokens"`
	PromptCacheHitTokens    usageCount         `json:"prompt_cache_hit_tokens"`
	CacheCreationTokens     usageCount         `json:"cache_creation_input_tokens"`
	PromptCacheMissTokens   usageCount         `json:"prompt_cache_miss_tokens"`

	malformed bool // the usage value was not an object of this shape
}

// promptDetails is prompt_tokens_details (input_tokens_details).
type promptDetails struct {
	CachedTokens usageCount `json:"cached_tokens"`
}

// completionDetails is completion_tokens_details (output_tokens_details).
type completionDetails struct {
	ReasoningTokens          usageCount `json:"reasoning_tokens"`
	AcceptedPredictionTokens usageCount `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens usageCount `json:"rejected_prediction_tokens"`
}

// usageCount is one token count of a usage object.
type usageCount struct {
	N   int    // the count, when valid
	Set bool   // a value was present (valid or not)
	Bad string // why the value is not a count ("null", "negative (-3)", ...); "" when valid or absent
}

// maxCount bounds a plausible token count: 2^40 is far beyond any context
// window, and keeps N exact in a float64.
const maxCount = 1 << 40

// UnmarshalJSON implements json.Unmarshaler; it never fails. b is a valid
// JSON value.
func (c *usageCount) UnmarshalJSON(b []byte) error {
	*c = usageCount{Set: true}
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		c.Bad = "null"
		return nil
	}
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		c.Bad = "not a number (" + shortValue(s) + ")"
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.Abs(f) >= maxCount:
		c.Bad = "out of range (" + shortValue(s) + ")"
	case f != math.Trunc(f):
		c.Bad = "not an integer (" + shortValue(s) + ")"
	case f < 0:
		c.Bad = "negative (" + shortValue(s) + ")"
	default:
		c.N = int(f)
	}
	return nil
}

// shortValue cuts a JSON value to a few characters for a message.
func shortValue(s string) string {
	const max = 24
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// usage converts the wire usage, nil when absent. Counts that are not
// non-negative integers are described in Usage.Untrusted (prompt and
// completion counts are required); a bad optional count (cached, cache
// write or miss, reasoning, predicted-output tokens), or a cache count
// above the prompt tokens, is dropped on its own, as if not reported.
func (w *wireChunk) usage() *metrics.Usage { return w.Usage.metrics() }

// metrics converts a usage object (nil: nil).
func (u *wireUsage) metrics() *metrics.Usage { return u.named(metrics.ChatNames) }

// named is metrics for an API whose prompt and completion counts have
// the names given (input_tokens and output_tokens, say): its problems,
// and those CheckUsage finds later, name the fields the server sent.
func (u *wireUsage) named(names metrics.UsageNames) *metrics.Usage {
	if u == nil {
		return nil
	}
	if u.malformed {
		return &metrics.Usage{Untrusted: "usage is not an object of token counts", Names: names}
	}
	out := &metrics.Usage{PromptTokens: u.PromptTokens.N, CompletionTokens: u.CompletionTokens.N, Names: names}
	prompt, completion := out.PromptField(), out.CompletionField()
	if n := u.TotalTokens.count(); n != nil && *n == out.PromptTokens+out.CompletionTokens {
		out.TotalTokens = n
	}
	var problems []string
	for _, f := range []struct {
		name     string
		c        usageCount
		required bool
	}{
		{prompt, u.PromptTokens, true},
		{completion, u.CompletionTokens, true},
		{"total_tokens", u.TotalTokens, false},
	} {
		switch {
		case f.c.Bad != "":
			problems = append(problems, f.name+" is "+f.c.Bad)
		case f.required && !f.c.Set:
			problems = append(problems, f.name+" is missing")
		}
	}
	out.Untrusted = strings.Join(problems, "; ")
	var read []usageCount
	for _, d := range []*promptDetails{u.PromptTokensDetails, u.InputTokensDetails} {
		if d != nil {
			read = append(read, d.CachedTokens)
		}
	}
	read = append(read, u.CacheReadInputTokens, u.PromptCacheHitTokens)
	out.CachedTokens = cacheCount(out.PromptTokens, read...)
	if out.CachedTokens == nil {
		out.CacheDropped = droppedCache(out.PromptTokens, read...)
	}
	out.CacheWriteTokens = cacheCount(out.PromptTokens, u.CacheCreationTokens)
	out.CacheMissTokens = cacheCount(out.PromptTokens, u.PromptCacheMissTokens)
	if d := u.CompletionTokensDetails; d != nil {
		if n := d.ReasoningTokens.count(); n != nil {
			out.ReasoningTokens, out.ReasoningReported = *n, true
		}
		out.AcceptedPredictionTokens = d.AcceptedPredictionTokens.count()
		out.RejectedPredictionTokens = d.RejectedPredictionTokens.count()
	}
	return out
}

// count is a valid reported count, nil when absent or not a count.
func (c usageCount) count() *int {
	if !c.Set || c.Bad != "" {
		return nil
	}
	n := c.N
	return &n
}

// droppedCache says why cacheCount kept no count of the synonyms when
// the server reported one: a count above the prompt tokens, or a value
// that is not a count; "" when none was reported (a null is none).
func droppedCache(prompt int, synonyms ...usageCount) string {
	for _, c := range synonyms {
		if n := c.count(); n != nil {
			return fmt.Sprintf("%d cached tokens, more than the %d prompt tokens", *n, prompt)
		}
	}
	for _, c := range synonyms {
		if c.Bad != "" && c.Bad != "null" {
			return "a cached token count that is " + c.Bad
		}
	}
	return ""
}

// cacheCount is the first valid count of the synonyms, in the order given,
// nil when none is, or when it exceeds the prompt tokens (a part of them).
func cacheCount(prompt int, synonyms ...usageCount) *int {
	for _, c := range synonyms {
		if n := c.count(); n != nil {
			if *n > prompt {
				return nil
			}
			return n
		}
	}
	return nil
}
