package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// files are the open files a dataset reads its conversations back from.
type files struct {
	list   []*os.File
	closed atomic.Bool
}

// Close closes the files; later calls do nothing.
func (fs *files) Close() error {
	if fs.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, f := range fs.list {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// readable checks that conversation i of n can be read back.
func (fs *files) readable(name string, i, n int) error {
	if i < 0 || i >= n {
		return fmt.Errorf("%s: conversation %d out of range [0, %d)", name, i, n)
	}
	if fs.closed.Load() {
		return fmt.Errorf("%s: conversation %d: dataset closed", name, i)
	}
	return nil
}

// samplingOr is the sampling strategy o asks for, else dflt.
func samplingOr(o Options, dflt string) string {
	if o.Sampling != "" {
		return o.Sampling
	}
	return dflt
}

// streamOSL keys the output lengths drawn for file rows.
const streamOSL uint64 = 0x6f736c // "osl"

// outputTokens is a file row's output length: its output_length, else a
// draw of --osl keyed by the row (so that it does not depend on the order
// rows are read in), else 0.
func outputTokens(o Options, outputLength *int64, row uint64) int {
	if outputLength != nil {
		return int(*outputLength)
	}
	if o.OSLMean <= 0 {
		return 0
	}
	r := rand.New(rand.NewPCG(uint64(o.Seed)^streamOSL, row))
	return drawLength(r, o.OSLMean, o.OSLStddev)
}

// setTiming copies a row's timestamp (shifted to the schedule's zero) and
// delay into t (timing), the timestamp with the idle gaps before it
// collapsed (replay.go).
func (d *fileDataset) setTiming(t *Turn, ts, delay *float64) {
	if ts != nil {
		shifted := d.compress(*ts) - d.zero
		ts = &shifted
	}
	timing(d.o, t, ts, delay)
}

// timing copies a turn's timestamp (already shifted to the schedule's
// zero) and delay into t: none with IgnoreDelays off a fixed schedule, the
// delay divided by the replay speed-up (replay time, like the timestamps)
// and then at most DelayCapMs unless a trace idle-gap cap replaces it.
func timing(o Options, t *Turn, ts, delay *float64) {
	if o.IgnoreDelays && !o.FixedSchedule {
		return
	}
	if ts != nil {
		t.TimestampMs, t.HasTimestamp = *ts, true
	}
	if delay != nil {
		t.DelayMs = *delay / o.Replay.speedup()
		if c := o.DelayCapMs; c != nil && o.Replay.TraceIdleGapCapMs == nil {
			t.DelayMs = min(t.DelayMs, *c)
		}
	}
}

// countMessages is the client tokenizer's count of the text content of an
// OpenAI messages array (messagesTokens).
func (d *fileDataset) countMessages(raw json.RawMessage) int { return messagesTokens(d.tok, raw) }

// messagesTokens is tok's count of the text content of an OpenAI messages
// array: string contents and the text of text parts.
func messagesTokens(tok tokenizer.Tokenizer, raw json.RawMessage) int {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &msgs) != nil {
		return 0
	}
	n := 0
	for _, m := range msgs {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			n += tok.Count(s)
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				if p.Type == "text" {
					n += tok.Count(p.Text)
				}
			}
		}
	}
	return n
}

// countPayload counts the text of a request body's messages or prompt; 0
// when it has neither.
func (d *fileDataset) countPayload(raw json.RawMessage) int { return payloadTokens(d.tok, raw) }

// payloadTokens is tok's count of the text of a request body's messages or
// prompt; 0 when it has neither.
func payloadTokens(tok tokenizer.Tokenizer, raw json.RawMessage) int {
	var p struct {
		Messages json.RawMessage `json:"messages"`
		Prompt   json.RawMessage `json:"prompt"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return 0
	}
	if isSet(p.Messages) {
		return messagesTokens(tok, p.Messages)
	}
	var s string
	if json.Unmarshal(p.Prompt, &s) == nil {
		return tok.Count(s)
	}
	return 0
}

// decodeExtra decodes a row's extra object, keeping numbers as written
// (json.Number) so that they are sent back unchanged.
func decodeExtra(raw json.RawMessage) (map[string]any, error) {
	if !isSet(raw) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}
