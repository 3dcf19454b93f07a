package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// InputsFile is the name of the export of the payloads a run sends, as
// AIPerf names it.
const InputsFile = "inputs.json"

// writeInputs writes inputs.json in AIPerf's shape: {"data": [{"session_id",
// "payloads": [...]}]}, one entry per dataset conversation (those only
// selects, when set), each payload a turn's body on its own (its system
// prompt and user context, no history and no replies), joinable with
// profile_export.jsonl on conversation_id and turn_index. It streams
// conversation by conversation and writes to a temporary file renamed into
// place, so a large trace never sits in memory and no half-written file is
// left.
func writeInputs(ctx context.Context, path string, s *source, only func(conv int) bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", InputsFile, err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", InputsFile, err)
	}
	err = s.encodeInputs(ctx, f, only)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", InputsFile, err)
	}
	return nil
}

// writeInputsSomewhere writes inputs.json at path or, when that fails for
// any reason but a changed input, into a new temporary directory, as the
// other exports go there when their directory cannot be written: a run
// that sent traffic always leaves what it sent somewhere. Its error says
// where it went.
func writeInputsSomewhere(ctx context.Context, path string, s *source, only func(conv int) bool) error {
	err := writeInputs(ctx, path, s, only)
	if err == nil || errors.Is(err, dataset.ErrInputChanged) || ctx.Err() != nil {
		return err
	}
	tmp, tmpErr := os.MkdirTemp("", "aiperf-inputs-")
	if tmpErr == nil {
		if tmpErr = writeInputs(ctx, filepath.Join(tmp, InputsFile), s, only); tmpErr == nil {
			return fmt.Errorf("%w; wrote it to %s instead", err, filepath.Join(tmp, InputsFile))
		}
		os.RemoveAll(tmp)
	}
	return fmt.Errorf("%w; nor to a temporary directory: %w", err, tmpErr)
}

// encodeInputs writes the inputs.json document of the conversations only
// selects (nil: all) to w, with the profile's secrets redacted (a credential
// sent in the body through --extra-inputs).
func (s *source) encodeInputs(ctx context.Context, w io.Writer, only func(conv int) bool) error {
	rd := s.p.Redactor()
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(`{"data": [`)
	first := true
	for i := range dataset.Nodes(s.ds) { // a DAG file's branches too
		if err := ctx.Err(); err != nil {
			return err
		}
		if only != nil && !only(i) {
			continue
		}
		read := &session{src: s, conv: i}
		read.load() // with --system-prompt, as it is sent
		c, err := read.c, read.err
		if err != nil {
			return fmt.Errorf("conversation %d: %w", i, err)
		}
		if !first {
			bw.WriteString(",")
		}
		first = false
		id, _ := json.Marshal(c.ID)
		fmt.Fprintf(bw, "\n  {\"session_id\": %s, \"payloads\": [", id)
		sep := ""
		for t := range c.Turns {
			if c.Turns[t].NoRequest { // an orchestrator's round sends nothing
				continue
			}
			body, err := endpoint.Body(s.alone(i, &c, t))
			if err != nil {
				return fmt.Errorf("conversation %s turn %d: %w", c.ID, t, err)
			}
			bw.WriteString(sep)
			sep = ", "
			if !rd.Empty() {
				body = []byte(rd.Redact(string(body)))
			}
			bw.Write(body)
		}
		bw.WriteString("]}")
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// sentSet holds the dataset conversations a run sent (a bit each), set
// from any goroutine: an interrupted run's inputs.json holds those only.
type sentSet []atomic.Uint64

func newSentSet(n int) sentSet { return make(sentSet, (n+63)/64) }

// mark notes that conversation conv was sent (nil or out of range: no-op).
func (s sentSet) mark(conv int) {
	if conv >= 0 && conv/64 < len(s) {
		s[conv/64].Or(1 << (conv % 64))
	}
}

// has reports whether conversation conv was sent.
func (s sentSet) has(conv int) bool {
	return conv >= 0 && conv/64 < len(s) && s[conv/64].Load()&(1<<(conv%64)) != 0
}

// alone is turn t of conversation conv (c) as a request on its own, as
// AIPerf's inputs.json shows it: its system prompt and user context, then
// the turn, with the first --model.
func (s *source) alone(conv int, c *dataset.Conversation, t int) endpoint.Request {
	sess := &session{src: s, conv: conv, c: *c} // a fresh session holds no history
	sess.model = s.turnModel(c, t, 0)           // as Send picks it for a trace that names models
	return sess.request(&c.Turns[t], "").Request
}

// rankingsOptions are the rankings flags with AIPerf's defaults, nil for
// an endpoint type that is not a rankings one.
func rankingsOptions(p plan.Profile) *dataset.Rankings {
	if !p.Spec().Rankings {
		return nil
	}
	or := func(x *int, d int) int {
		if x == nil {
			return d
		}
		return *x
	}
	return &dataset.Rankings{
		Passages: or(p.RankingsPassagesMean, plan.DefaultRankingsPassages), PassagesStddev: or(p.RankingsPassagesStddev, 0),
		PassageTokens:       or(p.RankingsPassagesPromptTokenMean, plan.DefaultRankingsTokens),
		PassageTokensStddev: or(p.RankingsPassagesPromptTokenStddev, 0),
		QueryTokens:         or(p.RankingsQueryPromptTokenMean, plan.DefaultRankingsTokens),
		QueryTokensStddev:   or(p.RankingsQueryPromptTokenStddev, 0),
	}
}

// checkTurnExtras refuses --extra-inputs keys that a Baseten trace sets on
// every turn (min_tokens, hash_ids, block_size): the row's value would
// silently replace the user's, so AIPerf refuses them too.
func checkTurnExtras(p plan.Profile, ds dataset.Dataset) error {
	if dataset.Kind(ds) != dataset.TypeBasetenTrace {
		return nil
	}
	extras := p.Extras()
	var clash []string
	for _, k := range []string{"min_tokens", "hash_ids", "block_size"} {
		if _, ok := extras[k]; ok {
			clash = append(clash, k)
		}
	}
	if clash == nil {
		return nil
	}
	return fmt.Errorf("--extra-inputs %s: a baseten_trace sets it on every request from the trace's row (min_tokens "+
		"the recorded output length, hash_ids and block_size its KV-cache hints): drop it (nothing was sent)", strings.Join(clash, ", "))
}

// checkHistory refuses, before any traffic, conversations that an endpoint
// type without messages cannot send: a request that re-sends a
// conversation's history, or opens with its system message, is a messages
// array, and completions, embeddings and the other types endpoint.PromptOnly
// names send a prompt (the synthetic multi-turn options are refused by
// plan.Check for the same reason). Every conversation of a dataset that is
// not a trace is looked at, only for those types.
func checkHistory(ctx context.Context, p plan.Profile, ds dataset.Dataset) error {
	if !endpoint.PromptOnly(p.EndpointType) || p.InputFile == "" || dataset.IsTrace(ds) {
		return nil
	}
	return eachConversation(ctx, ds, func(c *dataset.Conversation) error {
		what := ""
		switch {
		case c.System != "":
			what = "opens with a system message"
		case c.Mode == dataset.DeltasWithoutResponses && len(c.Turns) > 1:
			what = fmt.Sprintf("has %d turns, each re-sending the conversation so far", len(c.Turns))
		case c.DAG:
			what = "is a dag_jsonl conversation of messages"
		}
		if what != "" {
			return fmt.Errorf("%s: conversation %q %s, which only a messages array carries, and --endpoint-type %s "+
				"sends a prompt: use chat, responses or messages (nothing was sent)", p.InputFile, c.ID, what, p.EndpointType)
		}
		return nil
	})
}

// eachConversation calls check on every conversation of ds in turn (read
// back: one pass over the input), until one fails or ctx is done.
func eachConversation(ctx context.Context, ds dataset.Dataset, check func(*dataset.Conversation) error) error {
	read := ds.Conversation
	if t, ok := ds.(dataset.Tree); ok { // the branches too
		read = t.Node
	}
	for i := range dataset.Nodes(ds) {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := read(i)
		if err != nil {
			return err
		}
		if err := check(&c); err != nil {
			return err
		}
	}
	return nil
}

// checkRaw refuses a raw run whose data holds no payloads: raw sends each
// record's payload as it is, so a trace of input lengths would fail every
// request.
func checkRaw(p plan.Profile, ds dataset.Dataset) error {
	if p.EndpointType != plan.EndpointRaw || ds.Len() == 0 {
		return nil
	}
	c, err := ds.Conversation(0)
	if err != nil {
		return err
	}
	if len(c.Turns) == 0 || len(c.Turns[0].Payload) == 0 {
		return fmt.Errorf("--endpoint-type raw sends each record's payload as it is, and the first record of %s has none: "+
			`give mooncake_trace rows with a "payload" field (nothing was sent)`, p.InputFile)
	}
	return nil
}
