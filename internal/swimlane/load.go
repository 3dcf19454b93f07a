package swimlane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// The files of a run directory the view reads.
const (
	FileJSONL = "profile_export.jsonl"
	FileJSON  = "profile_export_aiperf.json"
)

// Bounds on what a run's files may hold.
const (
	// MaxLineBytes bounds one line of profile_export.jsonl.
	MaxLineBytes = 16 << 20
	// MaxRequests bounds the requests of a run.
	MaxRequests = 20_000_000
	// maxSpanNs bounds the run's span (about 73 years): the sweep packs
	// times relative to the first start with a flag bit.
	maxSpanNs = 1 << 61
	// maxErrorText bounds an error's text kept for the viewer.
	maxErrorText = 200
)

// Request is one timed request of the run.
type Request struct {
	Start, End int64   // wall-clock ns
	Session    int32   // index into Run.Sessions
	Turn       int32   // turn_index (0 when absent)
	TTFTms     float32 // NaN when absent
	LatencyMs  float32 // NaN when absent
	ISL, OSL   int32   // -1 when absent
	Err        int32   // index into Run.Errors; -1: it succeeded
	Warmup     bool    // benchmark_phase warmup
}

// Failed reports whether the request ended in an error.
func (r Request) Failed() bool { return r.Err >= 0 }

// Session is one session instance: the requests sharing an
// x_correlation_id (conversation_id in exports without one).
type Session struct {
	ID           string
	Conversation string
	Parent, Root string // parent_correlation_id, root_correlation_id
	Sub          bool   // a record of it has agent_depth > 0
	First, Last  int64  // its first start and last end, ns
	off, n       int32  // its requests: Run.order[off:off+n]
}

// Run is what a run directory holds for the view.
type Run struct {
	Dir       string
	Requests  []Request
	Sessions  []Session
	Errors    []string // distinct error texts, Request.Err indexes them
	RampS     *float64 // the profiling phase's concurrency ramp, seconds
	BenchEndS *float64 // the measured benchmark duration, seconds
	Notes     []string
	order     []int32 // request indices by session, each by turn then start
}

// SessionRequests are the indices of a session's requests, by turn_index
// then start.
func (r *Run) SessionRequests(s int) []int32 {
	ss := r.Sessions[s]
	return r.order[ss.off : ss.off+ss.n]
}

// Check checks that dir is a run directory with a profile_export.jsonl,
// saying what is missing, and that it and profile_export_aiperf.json (when
// there is one) are regular files: a FIFO or a device is refused by its
// mode, before it is opened, as inputfile.Open refuses it (a FIFO's open
// would wait for a writer, a device's read might never end).
func Check(dir string) error {
	path := filepath.Join(dir, FileJSONL)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if dst, derr := os.Stat(dir); derr != nil || !dst.IsDir() {
			return fmt.Errorf("run directory %s does not exist", dir)
		}
		return fmt.Errorf("%s not found: `aiperf profile` writes it into the run's artifact directory (unless --export-level summary)", path)
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	case st.IsDir():
		return fmt.Errorf("%s is a directory, not the run's record file", path)
	case !st.Mode().IsRegular():
		return notRegular(path, st.Mode())
	}
	config := filepath.Join(dir, FileJSON)
	if st, err := os.Stat(config); err == nil && !st.Mode().IsRegular() {
		return notRegular(config, st.Mode())
	}
	return nil
}

// notRegular is the refusal of an input that is not a regular file, as
// inputfile.Open words it.
func notRegular(path string, mode fs.FileMode) error {
	return &fs.PathError{Op: "open", Path: path, Err: inputfile.NotRegularError{Mode: mode}}
}

// Load reads a run directory: its profile_export.jsonl (required) and
// profile_export_aiperf.json (optional).
func Load(ctx context.Context, dir string) (*Run, error) {
	if err := Check(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileJSONL)
	r := &Run{Dir: dir}
	c := newCollector(r, path)
	if err := readLines(ctx, path, c.add, c.grow); err != nil {
		return nil, err
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	if err := r.readConfig(filepath.Join(dir, FileJSON)); err != nil {
		return nil, err
	}
	return r, nil
}

// errorText is a record's error as the viewer shows it: code, type and
// message, cut to maxErrorText bytes; "" when it succeeded.
func errorText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var e struct {
		Code    any    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	s := string(raw)
	if json.Unmarshal(raw, &e) == nil {
		s = e.Message
		if e.Type != "" {
			s = e.Type + ": " + s
		}
		if e.Code != nil {
			s = fmt.Sprint(e.Code) + " " + s
		}
	}
	if s == "" {
		s = "error"
	}
	if len(s) > maxErrorText {
		s = s[:maxErrorText] + "…"
	}
	return s
}

// collector turns decoded records into the run, in file order.
type collector struct {
	r                  *Run
	path               string
	sessions, errs     map[string]int32
	cancelled, untimed int
}

func newCollector(r *Run, path string) *collector {
	return &collector{r: r, path: path, sessions: map[string]int32{}, errs: map[string]int32{}}
}

// grow makes room for the requests of lines lines.
func (c *collector) grow(lines int) {
	if lines > cap(c.r.Requests) {
		c.r.Requests = slices.Grow(c.r.Requests, lines-len(c.r.Requests))
	}
}

// add takes one decoded record of line n.
func (c *collector) add(rec *record, n int) error {
	switch {
	case !rec.hasStart || !rec.hasEnd:
		c.untimed++
		return nil
	case rec.cancelled:
		c.cancelled++
		return nil
	case rec.end < rec.start:
		return fmt.Errorf("%s:%d: request_end_ns %d is before request_start_ns %d", c.path, n, rec.end, rec.start)
	case len(rec.correlation) == 0 && len(rec.conversation) == 0:
		return fmt.Errorf("%s:%d: the record has neither x_correlation_id nor conversation_id: its session is unknown", c.path, n)
	case len(c.r.Requests) >= MaxRequests:
		return fmt.Errorf("%s: more than %d timed requests, more than a swim lane can show", c.path, MaxRequests)
	}
	key := rec.correlation
	if len(key) == 0 {
		key = rec.conversation
	}
	s, ok := c.sessions[string(key)]
	if !ok {
		s = int32(len(c.r.Sessions))
		id := string(key) // one copy, the map's key and the session's id
		c.sessions[id] = s
		c.r.Sessions = append(c.r.Sessions, Session{ID: id, Conversation: c.conversation(rec.conversation, id), First: rec.start, Last: rec.end})
	}
	ss := &c.r.Sessions[s]
	ss.First, ss.Last = min(ss.First, rec.start), max(ss.Last, rec.end)
	ss.Sub = ss.Sub || rec.depth > 0
	if ss.Parent == "" && len(rec.parent) > 0 {
		ss.Parent = string(rec.parent)
	}
	if ss.Root == "" && len(rec.root) > 0 {
		ss.Root = string(rec.root)
	}
	q := Request{Start: rec.start, End: rec.end, Session: s, TTFTms: rec.ttft.ms(), LatencyMs: rec.latency.ms(),
		ISL: rec.isl.count(), OSL: rec.osl.count(), Err: -1, Warmup: string(rec.phase) == "warmup"}
	if rec.hasTurn && rec.turn >= 0 && rec.turn <= math.MaxInt32 {
		q.Turn = int32(rec.turn)
	}
	if text := errorText(rec.err); text != "" {
		e, ok := c.errs[text]
		if !ok {
			e = int32(len(c.r.Errors))
			c.errs[text] = e
			c.r.Errors = append(c.r.Errors, text)
		}
		q.Err = e
	}
	c.r.Requests = append(c.r.Requests, q)
	return nil
}

// conversation is a session's conversation_id: its id's text when they
// are the same (a run without x_correlation_id), else its own copy.
func (c *collector) conversation(conv []byte, id string) string {
	if string(conv) == id {
		return id
	}
	return string(conv)
}

// finish checks what was read and orders each session's requests.
func (c *collector) finish() error {
	r := c.r
	if c.cancelled > 0 || c.untimed > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: left out %d cancelled and %d untimed record(s), as AIPerf does",
			FileJSONL, c.cancelled, c.untimed))
	}
	if len(r.Requests) == 0 {
		return fmt.Errorf("%s: no timed request (a record with request_start_ns and request_end_ns, not cancelled): nothing to draw", c.path)
	}
	lo, hi := r.Requests[0].Start, r.Requests[0].End
	for _, q := range r.Requests {
		lo, hi = min(lo, q.Start), max(hi, q.End)
	}
	if uint64(hi-lo) >= maxSpanNs {
		return fmt.Errorf("%s: the requests span %d ns, more than a run can: the times are not wall-clock nanoseconds", c.path, hi-lo)
	}
	r.order = make([]int32, len(r.Requests))
	for i := range r.order {
		r.order[i] = int32(i)
	}
	slices.SortStableFunc(r.order, func(a, b int32) int {
		qa, qb := &r.Requests[a], &r.Requests[b]
		if qa.Session != qb.Session {
			return int(qa.Session - qb.Session)
		}
		if qa.Turn != qb.Turn {
			return int(qa.Turn - qb.Turn)
		}
		return cmpInt64(qa.Start, qb.Start)
	})
	for i := 0; i < len(r.order); {
		s := r.Requests[r.order[i]].Session
		j := i
		for j < len(r.order) && r.Requests[r.order[j]].Session == s {
			j++
		}
		r.Sessions[s].off, r.Sessions[s].n = int32(i), int32(j-i)
		i = j
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
