package metrics

import "fmt"

// Plausibility bounds of server usage against the client's own counts. They
// are loose on purpose: chat templates add prompt tokens, tokenizers differ,
// so only a count no honest server could report is refused.
const (
	usageRatio = 100 // a count more than 100× the other side's (plus usageSlack) is absurd
	usageSlack = 100
	// A server never generates more than the max_tokens it was sent; a
	// count beyond it by more than 10% + maxTokensSlack is not a count.
	maxTokensSlack = 8
)

// CheckUsage marks the record's server usage untrusted when its counts are
// implausible beside the client's (its reason naming the fields the server
// sent: Usage.Names): more completion tokens than were
// requested, a prompt or completion count wildly off the client's count,
// or no prompt tokens for a prompt the client counted tokens in. Call it
// once the client counts (InputTokens, OutputTokens, ReasoningTokens) are
// final; once the server's have replaced them (TakeServerCounts: a merged
// worker's record) it judges the usage against the client's counts kept
// in Client, never against itself. Usage already untrusted is left as it
// is. A reply the client did not count (Uncounted) has its completion
// count judged by max_tokens only; one of an endpoint that generates no
// text (NoTokens: an image's output_tokens) by neither, as it sent no
// max_tokens and brought no text to count.
func CheckUsage(r *Record) {
	u := r.Usage
	if !u.Trusted() || !r.OK() {
		return
	}
	c := r.ClientCounted()
	// Reasoning the server did not stream (OpenAI's hidden reasoning) is in
	// completion_tokens but not in the client's count.
	visible := u.CompletionTokens
	if c.ReasoningTokens == 0 {
		visible -= u.ReasoningTokens
	}
	client := c.output()
	prompt, completion := u.PromptField(), u.CompletionField()
	switch req := r.RequestedOutputTokens; {
	case req > 0 && !r.NoTokens && u.CompletionTokens > req+req/10+maxTokensSlack:
		u.Untrusted = fmt.Sprintf("%s %d exceeds the %d max tokens requested", completion, u.CompletionTokens, req)
	case u.ReasoningTokens > u.CompletionTokens:
		u.Untrusted = fmt.Sprintf("reasoning_tokens %d exceeds %s %d", u.ReasoningTokens, completion, u.CompletionTokens)
	case !c.Uncounted && !r.NoTokens && absurd(visible, client):
		u.Untrusted = fmt.Sprintf("%s %d is implausible beside the %d tokens the client counted", completion, u.CompletionTokens, client)
	case u.PromptTokens == 0 && c.InputTokens > 0:
		u.Untrusted = fmt.Sprintf("%s is 0 for a prompt the client counted %d tokens in", prompt, c.InputTokens)
	case absurd(u.PromptTokens, c.InputTokens) && !(r.Media != nil && u.PromptTokens > c.InputTokens):
		// The client counts a prompt's text; the server also its images,
		// audio and video (a short question about one image: 10 tokens
		// of text, over 1,000 in all), so with media only a count below
		// the text's is implausible.
		if u.Names == MessagesNames {
			prompt += " with the cache's reads and writes,"
		}
		u.Untrusted = fmt.Sprintf("%s %d is implausible beside the %d tokens the client sent", prompt, u.PromptTokens, c.InputTokens)
	}
}

// specialTokens is how many completion tokens a reply may hold beyond the
// bytes of its text: special tokens (an end-of-sequence token vLLM counts,
// a chat template's markers) decode to nothing. A reply with no text holds
// at most its end-of-sequence token (emptyReplyTokens).
const (
	specialTokens    = 8
	emptyReplyTokens = 1
)

// CheckReceived marks the record's server usage untrusted when its
// completion count is more than the text that arrived could hold: every
// token decodes to a byte at least, so completion_tokens cannot exceed the
// UTF-8 bytes of the text and reasoning received (textBytes,
// reasoningBytes), plus specialTokens, and a reply without any text cannot
// claim more than emptyReplyTokens. Reasoning the server counted but did
// not stream (reasoning_tokens with no reasoning text: OpenAI's hidden
// reasoning) is not held against it. Call it with the reply's text, as
// CheckUsage before any count is replaced by the server's, also for a reply
// the client did not count (Uncounted): the bytes are known even then.
// Usage already untrusted is left as it is.
func CheckReceived(r *Record, textBytes, reasoningBytes int) {
	u := r.Usage
	if !u.Trusted() || !r.OK() || r.NoTokens {
		return
	}
	visible := u.CompletionTokens
	if reasoningBytes == 0 {
		visible -= min(u.ReasoningTokens, u.CompletionTokens)
	}
	received := textBytes + reasoningBytes
	switch {
	case received == 0 && visible > emptyReplyTokens:
		u.Untrusted = fmt.Sprintf("%s: no generated text arrived", streamedClaim(u, visible))
	case received > 0 && visible > received+specialTokens:
		u.Untrusted = fmt.Sprintf("%s, more than the %d byte(s) of generated text that arrived could hold",
			streamedClaim(u, visible), received)
	}
}

// streamedClaim names the completion tokens a server says it streamed:
// its completion count (by the name the server gave it), less the hidden
// reasoning when there is some.
func streamedClaim(u *Usage, visible int) string {
	if visible == u.CompletionTokens {
		return fmt.Sprintf("%s %d", u.CompletionField(), u.CompletionTokens)
	}
	return fmt.Sprintf("%s %d (%d beside the %d hidden reasoning tokens)",
		u.CompletionField(), u.CompletionTokens, visible, u.CompletionTokens-visible)
}

// absurd reports a server count more than usageRatio times off the client's.
func absurd(server, client int) bool {
	return server > usageRatio*client+usageSlack || client > usageRatio*server+usageSlack
}

// usageDiffLimit is AIPerf's USAGE_PCT_DIFF_THRESHOLD: a request whose server
// and client counts differ by more than this many percent is a usage
// discrepancy.
const usageDiffLimit = 10.0

// usageDiscrepancy reports whether r counts toward usage_discrepancy_count:
// its usage is untrusted, or a prompt, completion or reasoning count
// differs from the client's (ClientCounted) by more than usageDiffLimit
// percent (AIPerf's definition).
func usageDiscrepancy(r *Record) bool {
	u := r.Usage
	if u == nil {
		return false
	}
	if u.Untrusted != "" {
		return true
	}
	c := r.ClientCounted()
	if c.InputTokens > 0 && diffPct(u.PromptTokens, c.InputTokens) > usageDiffLimit {
		return true
	}
	client := c.output()
	if !r.NoTokens && client > 0 && diffPct(u.CompletionTokens, client) > usageDiffLimit {
		return true
	}
	return !r.NoTokens && u.reasoningReported() && c.ReasoningTokens > 0 &&
		diffPct(u.ReasoningTokens, c.ReasoningTokens) > usageDiffLimit
}

// reasoningReported reports whether the server gave a reasoning count.
func (u *Usage) reasoningReported() bool { return u.ReasoningReported || u.ReasoningTokens > 0 }

// visitUsage emits the usage metrics of a successful request that
// generates tokens, from trusted server usage: the counts in AIPerf's
// order (prompt, its cache reads, writes and misses, completion,
// reasoning, predicted-output tokens, total), each when reported, then
// the differences from the client's counts (ClientCounted: the client's
// own also where the server's replaced them on the record).
func visitUsage(r *Record, emit func(id int, v float64)) {
	u := r.Usage
	if !u.Trusted() {
		return
	}
	emit(idUsagePrompt, float64(u.PromptTokens))
	emitCount(idUsageCacheRead, u.CachedTokens, emit)
	emitCount(idUsageCacheWrite, u.CacheWriteTokens, emit)
	emitCount(idUsageCacheMiss, u.CacheMissTokens, emit)
	emit(idUsageCompletion, float64(u.CompletionTokens))
	if u.reasoningReported() {
		emit(idUsageReasoning, float64(u.ReasoningTokens))
	}
	emitCount(idUsageAccepted, u.AcceptedPredictionTokens, emit)
	emitCount(idUsageRejected, u.RejectedPredictionTokens, emit)
	emitCount(idUsageTotal, u.TotalTokens, emit)
	c := r.ClientCounted()
	if c.InputTokens > 0 {
		emit(idUsagePromptDiff, diffPct(u.PromptTokens, c.InputTokens))
	}
	if client := c.output(); client > 0 {
		emit(idUsageCompletionDiff, diffPct(u.CompletionTokens, client))
	}
	if u.reasoningReported() && c.ReasoningTokens > 0 {
		emit(idUsageReasoningDiff, diffPct(u.ReasoningTokens, c.ReasoningTokens))
	}
}

// emitCount emits a reported count (nil: not reported).
func emitCount(id int, n *int, emit func(id int, v float64)) {
	if n != nil {
		emit(id, float64(*n))
	}
}
