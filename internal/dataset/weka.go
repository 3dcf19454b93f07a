package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// wekaTrace is one Weka KV-cache-tester trace file (AIPerf's WekaTrace):
// one agentic coding conversation whose requests interleave normal ("n")
// and streaming ("s") API calls with subagent markers, each holding its
// own requests.
type wekaTrace struct {
	ID         string         `json:"id"`
	Models     []string       `json:"models"`
	BlockSize  int64          `json:"block_size"`
	Scope      string         `json:"hash_id_scope"`
	ToolTokens int64          `json:"tool_tokens"`
	SysTokens  int64          `json:"system_tokens"`
	Requests   []wekaRequest  `json:"-"`
	Totals     map[string]any `json:"totals"`
}

// wekaRequest is an element of a trace's requests: an API call, or (Type
// "subagent") a subagent and its inner API calls.
type wekaRequest struct {
	T            float64  `json:"t"`
	Type         string   `json:"type"`
	Model        string   `json:"model"`
	In           int64    `json:"in"`
	Out          int64    `json:"out"`
	HashIDs      []int64  `json:"hash_ids"`
	InputTypes   []string `json:"input_types"`
	OutputTypes  []string `json:"output_types"`
	Stop         string   `json:"stop"`
	APITime      *float64 `json:"api_time"`
	ThinkTime    *float64 `json:"think_time"`
	TTFT         *float64 `json:"ttft"`
	AgentID      string   `json:"agent_id"`
	SubagentType string   `json:"subagent_type"`
	DurationMs   *int64   `json:"duration_ms"`
	TotalTokens  *int64   `json:"total_tokens"`
	ToolUseCount *int64   `json:"tool_use_count"`
	Status       string   `json:"status"`
	Models       []string `json:"models"`
	ToolTokens   int64    `json:"tool_tokens"`
	SysTokens    int64    `json:"system_tokens"`
	Inner        []wekaRequest
	off          int // where it starts in its file
	tOff         int // where its "t" value is (an API call's)
}

// The fields of each object of a Weka trace (AIPerf's models forbid any
// other) and those it requires.
var (
	wekaTraceFields    = []string{"id", "models", "block_size", "hash_id_scope", "tool_tokens", "system_tokens", "requests", "totals"}
	wekaTraceRequired  = []string{"id", "models", "block_size", "hash_id_scope", "requests"}
	wekaCallFields     = []string{"t", "type", "model", "in", "out", "hash_ids", "input_types", "output_types", "stop", "api_time", "think_time"}
	wekaCallRequired   = []string{"t", "type", "model", "in", "out"}
	wekaSubFields      = []string{"t", "type", "agent_id", "subagent_type", "duration_ms", "total_tokens", "tool_use_count", "status", "requests", "models", "tool_tokens", "system_tokens"}
	wekaSubRequired    = []string{"t", "type", "agent_id", "subagent_type", "status", "requests", "models"}
	maxWekaFile        = int64(maxLine)
	wekaJoinEpsilonSec = 1e-6
)

// wekaDoc is a trace file's text, for placing problems at their lines.
type wekaDoc struct {
	ctx   context.Context // checked between requests: a large file takes seconds
	data  []byte
	ps    []wekaProblem // the first wekaKeptProblems
	total int           // problems found
}

// wekaKeptProblems is how many problems of a file are kept to be placed
// (a few times as many as are shown, which are the first by offset): a
// hostile file's millions are counted, not held.
const wekaKeptProblems = 4 * maxProblems

// wekaProblem is a problem of a trace file at a byte offset.
type wekaProblem struct {
	off int
	p   problem
}

func (d *wekaDoc) add(off int, field, format string, args ...any) {
	if d.total++; len(d.ps) < wekaKeptProblems {
		d.ps = append(d.ps, wekaProblem{off, problemf(field, format, args...)})
	}
}

// parseWeka decodes and checks a trace file's text as AIPerf's WekaTrace
// model validates it; every problem is placed at the line of the object
// it is in, its field a path (requests[3].in). more is how many problems
// were found beyond those returned. Once ctx is done it stops between
// requests; the caller asks ctx.
func parseWeka(ctx context.Context, data []byte) (tr wekaTrace, ps []wekaProblem, more int) {
	d := &wekaDoc{ctx: ctx, data: data}
	fields, ok := d.object(data, 0, "", wekaTraceFields, wekaTraceRequired)
	if !ok {
		return tr, d.ps, d.total - len(d.ps)
	}
	d.decode(fields, "id", "", &tr.ID, "a string")
	d.decode(fields, "models", "", &tr.Models, "a list of strings")
	if d.decode(fields, "block_size", "", &tr.BlockSize, "an integer") && tr.BlockSize <= 0 {
		d.add(fields["block_size"].off, "block_size", "expected an integer greater than 0, got %d", tr.BlockSize)
	}
	if d.decode(fields, "hash_id_scope", "", &tr.Scope, "a string") && tr.Scope != "local" {
		d.add(fields["hash_id_scope"].off, "hash_id_scope", `expected "local" (hash ids scoped to the trace; AIPerf rejects other scopes too), got %s`, brief(tr.Scope))
	}
	d.decode(fields, "tool_tokens", "", &tr.ToolTokens, "an integer")
	d.decode(fields, "system_tokens", "", &tr.SysTokens, "an integer")
	d.decode(fields, "totals", "", &tr.Totals, "an object")
	if raw, ok := fields["requests"]; ok {
		tr.Requests = d.requests(raw, "requests", true)
	}
	return tr, d.ps, d.total - len(d.ps)
}

// field is a raw field value and its offset in the document.
type field struct {
	raw json.RawMessage
	off int
}

// namedField is a field of an object, in the object's order: its value,
// and start, the offset right after its name (where a problem of an
// unknown field is placed).
type namedField struct {
	name  string
	f     field
	start int
}

// object splits the object at off into its fields, checking their names.
func (d *wekaDoc) object(raw []byte, off int, path string, allowed, required []string) (map[string]field, bool) {
	list, ok := d.split(raw, off, path)
	if !ok {
		return nil, false
	}
	return d.check(list, off, path, allowed, required)
}

// split splits the object at off into its fields, in order.
func (d *wekaDoc) split(raw []byte, off int, path string) ([]namedField, bool) {
	var list []namedField
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		d.add(off, strings.TrimSuffix(path, "."), "expected an object, got %s", jsonKindOf(bytes.TrimSpace(raw)))
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			d.add(off+int(dec.InputOffset()), strings.TrimSuffix(path, "."), "invalid JSON: %v", err)
			return nil, false
		}
		name := tok.(string)
		var v json.RawMessage
		start := int(dec.InputOffset())
		if err := dec.Decode(&v); err != nil {
			d.add(off+start, path+name, "invalid JSON: %v", err)
			return nil, false
		}
		list = append(list, namedField{name, field{v, off + start + leadingSpace(raw[start:])}, off + start})
	}
	return list, true
}

// check keeps the fields of list that allowed names (the last of a name
// repeated), reporting the others, and the required ones missing.
func (d *wekaDoc) check(list []namedField, off int, path string, allowed, required []string) (map[string]field, bool) {
	fields := make(map[string]field, len(list))
	for _, nf := range list {
		if !slices.Contains(allowed, nf.name) {
			d.add(nf.start, path+nf.name, "unknown field (AIPerf's schema forbids it): expected one of %s", strings.Join(allowed, ", "))
			continue
		}
		fields[nf.name] = nf.f
	}
	ok := true
	for _, name := range required {
		if _, has := fields[name]; !has {
			d.add(off, path+name, "required")
			ok = false
		}
	}
	return fields, ok
}

// intList reads a JSON list of integers written plainly (digits, an
// optional minus) that fit an int64, as json.Unmarshal would; anything
// else is left to json.Unmarshal (ok false).
func intList(raw []byte) (out []int64, ok bool) {
	i := 0
	ws := func() {
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
			i++
		}
	}
	ws()
	if i == len(raw) || raw[i] != '[' {
		return nil, false
	}
	i++
	out = []int64{}
	for ws(); i < len(raw) && raw[i] != ']'; ws() {
		if len(out) > 0 {
			if raw[i] != ',' {
				return nil, false
			}
			i++
			ws()
		}
		start := i
		if i < len(raw) && raw[i] == '-' {
			i++
		}
		digits := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		if i-digits > 1 && raw[digits] == '0' { // 01 is not JSON
			return nil, false
		}
		n, err := strconv.ParseInt(string(raw[start:i]), 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	if i == len(raw) {
		return nil, false
	}
	i++
	ws()
	return out, i == len(raw)
}

func leadingSpace(b []byte) int { return len(b) - len(bytes.TrimLeft(b, " \t\r\n:")) }

// decode decodes field name into v (when present and not null), reporting
// a value of the wrong kind; it reports whether v was set.
func (d *wekaDoc) decode(fields map[string]field, name, path string, v any, want string) bool {
	f, ok := fields[name]
	if !ok || string(f.raw) == "null" {
		return false
	}
	if err := json.Unmarshal(f.raw, v); err != nil {
		got := jsonKindOf(f.raw)
		if got == "a number" { // out of the type's range (1e400), or a fraction for a whole number
			got = string(f.raw[:min(len(f.raw), 40)]) + ", which does not fit"
		}
		d.add(f.off, path+name, "expected %s, got %s", want, got)
		return false
	}
	return true
}

// requests decodes a requests list: API calls, and at the top level
// subagents too.
func (d *wekaDoc) requests(f field, path string, top bool) []wekaRequest {
	switch t := bytes.TrimSpace(f.raw); {
	case string(t) == "null":
		return nil
	case len(t) == 0 || t[0] != '[':
		d.add(f.off, path, "expected a list of requests, got %s", jsonKindOf(f.raw))
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(f.raw)) // f.raw is valid JSON: its decoder read it
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out []wekaRequest
	for i := 0; dec.More(); i++ {
		if i%64 == 0 && d.ctx.Err() != nil {
			return nil
		}
		start := int(dec.InputOffset())
		at := f.off + start + leadingSpace(f.raw[start:]) + commaSkip(f.raw[start:])
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			break
		}
		if r, ok := d.request(raw, at, fmt.Sprintf("%s[%d].", path, i), top); ok {
			r.off = at
			out = append(out, r)
		}
	}
	return out
}

// request decodes and checks one element of a requests list.
func (d *wekaDoc) request(raw []byte, off int, path string, top bool) (wekaRequest, bool) {
	var r wekaRequest
	list, ok := d.split(raw, off, path)
	if !ok {
		return r, false
	}
	t, ok := d.typeOf(list, path)
	if !ok {
		d.check(list, off, path, wekaCallFields, []string{"type"}) // reports what else is wrong
		return r, false
	}
	n := d.total
	switch {
	case t == "n" || t == "s":
		allowed := wekaCallFields
		if t == "s" {
			allowed = append(slices.Clone(allowed), "ttft")
		}
		fields, ok := d.check(list, off, path, allowed, wekaCallRequired)
		if !ok {
			return r, false
		}
		r.Type, r.tOff = t, fields["t"].off
		d.decode(fields, "t", path, &r.T, "a number")
		d.decode(fields, "model", path, &r.Model, "a string")
		d.decode(fields, "in", path, &r.In, "an integer")
		d.decode(fields, "out", path, &r.Out, "an integer")
		if ids, ok := intList(fields["hash_ids"].raw); ok { // most of a trace's bytes: read without reflection
			r.HashIDs = ids
		} else {
			d.decode(fields, "hash_ids", path, &r.HashIDs, "a list of integers")
		}
		d.decode(fields, "input_types", path, &r.InputTypes, "a list of strings")
		d.decode(fields, "output_types", path, &r.OutputTypes, "a list of strings")
		d.decode(fields, "stop", path, &r.Stop, "a string")
		d.decode(fields, "api_time", path, &r.APITime, "a number")
		d.decode(fields, "think_time", path, &r.ThinkTime, "a number")
		d.decode(fields, "ttft", path, &r.TTFT, "a number")
		if r.In < 0 || r.In > maxInputLength {
			d.add(off, path+"in", "expected an integer from 0 to %d, got %d", maxInputLength, r.In)
		}
		if r.Out < 0 || r.Out > maxInputLength {
			d.add(off, path+"out", "expected an integer from 0 to %d, got %d", maxInputLength, r.Out)
		}
	case t == "subagent" && top:
		fields, ok := d.check(list, off, path, wekaSubFields, wekaSubRequired)
		if !ok {
			return r, false
		}
		r.Type, r.tOff = t, fields["t"].off
		d.decode(fields, "t", path, &r.T, "a number")
		d.decode(fields, "agent_id", path, &r.AgentID, "a string")
		d.decode(fields, "subagent_type", path, &r.SubagentType, "a string")
		d.decode(fields, "duration_ms", path, &r.DurationMs, "an integer")
		d.decode(fields, "total_tokens", path, &r.TotalTokens, "an integer")
		d.decode(fields, "tool_use_count", path, &r.ToolUseCount, "an integer")
		d.decode(fields, "status", path, &r.Status, "a string")
		d.decode(fields, "models", path, &r.Models, "a list of strings")
		d.decode(fields, "tool_tokens", path, &r.ToolTokens, "an integer")
		d.decode(fields, "system_tokens", path, &r.SysTokens, "an integer")
		r.Inner = d.requests(fields["requests"], path+"requests", false)
	default:
		want := `"n" (an API call), "s" (a streaming API call) or "subagent"`
		if !top {
			want = `"n" or "s" (a subagent's requests are API calls)`
		}
		d.add(off, path+"type", "expected %s, got %s", want, brief(t))
		return r, false
	}
	if math.IsNaN(r.T) || math.IsInf(r.T, 0) || r.T < 0 || r.T*1000 > MaxTimestampMs {
		d.add(off, path+"t", "expected the request's time in seconds (a number from 0 to %g), got %v", float64(MaxTimestampMs)/1000, r.T)
	}
	return r, d.total == n
}

// typeOf is a request's type: its (last) "type" field, a string. A type
// that is there but not a string is reported; a missing one is the
// caller's to report.
func (d *wekaDoc) typeOf(list []namedField, path string) (string, bool) {
	var typ *field
	for i := range list {
		if list[i].name == "type" {
			typ = &list[i].f
		}
	}
	if typ == nil {
		return "", false
	}
	var t string
	if json.Unmarshal(typ.raw, &t) != nil || string(typ.raw) == "null" {
		d.add(typ.off, path+"type", "expected a string, got %s", jsonKindOf(typ.raw))
		return "", false
	}
	return t, true
}

// commaSkip is the length of a separator (comma and spaces) at the start
// of b, after leading spaces.
func commaSkip(b []byte) int {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) > 0 && t[0] == ',' {
		return 1 + len(t[1:]) - len(bytes.TrimLeft(t[1:], " \t\r\n"))
	}
	return 0
}

// place turns a trace file's problems into LineErrors, each at the line of
// its offset.
func placeWeka(path string, data []byte, wps []wekaProblem, ps *problems) {
	sort.SliceStable(wps, func(i, j int) bool { return wps[i].off < wps[j].off })
	line, at := 1, 0
	for _, wp := range wps {
		off := min(wp.off, len(data))
		line += bytes.Count(data[at:off], []byte{'\n'})
		at = off
		ps.add(line, wp.p)
	}
}

// readWeka reads a trace file whole (at most maxWekaFile bytes).
func readWeka(r io.Reader, path string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxWekaFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > maxWekaFile {
		return nil, &LineError{Path: path, Msg: fmt.Sprintf("a trace file is longer than %d MiB", maxWekaFile>>20)}
	}
	return data, nil
}
