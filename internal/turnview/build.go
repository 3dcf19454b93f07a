package turnview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// AIPerf's defaults (its analysis/turn_messages.py).
const (
	DefaultLimitConversations = 40
	DefaultMaxTurns           = 60
	DefaultContentCap         = 8000
)

// Options bound what the viewer keeps and shows.
type Options struct {
	// LimitConversations is how many conversations are shown: roots
	// first, then by their earliest request.
	LimitConversations int
	// MaxTurns is how many turns of a conversation are shown; the rest
	// are counted.
	MaxTurns int
	// ContentCap is how many characters of each unique message body are
	// kept; the rest are counted.
	ContentCap int
}

func (o Options) check() error {
	if o.LimitConversations < 1 || o.MaxTurns < 1 || o.ContentCap < 1 {
		return fmt.Errorf("the conversation limit (%d), turn limit (%d) and content cap (%d) must be positive",
			o.LimitConversations, o.MaxTurns, o.ContentCap)
	}
	return nil
}

// View is what the page shows.
type View struct {
	Source, Version string // the run read, and aiperf's version (the header)
	Files           int    // raw-record files read
	Options         Options
	// Conversations, Turns and MessageRefs count the whole export: its
	// conversations (a replay counted apart), requests, and the messages
	// they sent (each turn's whole history).
	Conversations, Turns, MessageRefs int
	Roles                             []RoleCount // messages sent by role, most first
	Msgs                              []Message   // the unique messages of the turns shown
	Convs                             []Conversation
}

// RoleCount is how many messages of a role the export's requests sent.
type RoleCount struct {
	Role  string
	Count int
}

// Message is a unique message: its role and its body, cut at the cap.
type Message struct {
	Role string
	Len  int    // characters
	Body string // the first ContentCap characters
	Cut  int    // characters not kept
}

// Conversation is a conversation shown.
type Conversation struct {
	ID          string
	Depth       int64  // 0: a root; a dag_jsonl branch's agent_depth
	Parent      string // the parent's conversation id, for a branch whose parent is in the export
	Lane        string // the session (x_correlation_id)
	Replay      int    // 0, or N for AIPerf's "replay N+1": another session of the same conversation
	Models      []string
	TotalTurns  int
	HiddenTurns int // beyond MaxTurns
	Turns       []Turn
}

// Turn is one request of a conversation.
type Turn struct {
	Index             int64
	HasIndex          bool
	Phase, MaxTokens  string
	Cancelled, Failed bool
	Messages          []int // into View.Msgs, in the order sent
}

// Build reads a run's raw-record files (Find) into the view of their
// conversations that opt bounds. An error names the file and line at
// fault; an interruption of ctx stops the reading.
func Build(ctx context.Context, files []string, opt Options) (*View, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	x := &index{ids: map[string]int32{"": 0}, strs: []string{""}, corrConv: map[int32]int32{}, roles: map[string]int{}}
	for i, f := range files {
		if err := x.read(ctx, int32(i), f); err != nil {
			return nil, err
		}
	}
	if len(x.recs) == 0 {
		return nil, fmt.Errorf("%s: no request records: the run sent no profiling request", strings.Join(files, ", "))
	}
	if x.payloads == 0 {
		return nil, fmt.Errorf("%s: no request payloads: profile with --export-level raw "+
			"(its raw records hold each request's payload, the messages sent; these %d records have none)", strings.Join(files, ", "), len(x.recs))
	}
	groups := x.groups()
	v := &View{Files: len(files), Options: opt, Conversations: len(groups), Turns: len(x.recs),
		MessageRefs: x.messages, Roles: x.legend()}
	need := map[lineKey]slot{}
	for ci, g := range groups[:min(len(groups), opt.LimitConversations)] {
		conv, kept := x.conversation(g, opt.MaxTurns)
		for ti, r := range kept {
			need[lineKey{x.recs[r].file, x.recs[r].line}] = slot{ci, ti}
		}
		v.Convs = append(v.Convs, conv)
	}
	if err := v.readMessages(ctx, files, need); err != nil {
		return nil, err
	}
	return v, nil
}

// rec is what the first pass keeps of a record: a few numbers.
type rec struct {
	file, line                int32
	conv, corr, parent, model int32 // into index.strs; 0 is none
	turn, depth, start        int64
	hasTurn                   bool
}

// index is the first pass over the export: every record's metadata, the
// ids interned once, and the counts of messages and roles.
type index struct {
	ids      map[string]int32
	strs     []string
	recs     []rec
	corrConv map[int32]int32 // x_correlation_id → its conversation
	messages int
	payloads int // records with a payload object
	roles    map[string]int
	order    []string // roles in order of appearance
}

func (x *index) str(s string) int32 {
	id, ok := x.ids[s]
	if !ok {
		id = int32(len(x.strs))
		x.ids[s] = id
		x.strs = append(x.strs, s)
	}
	return id
}

// read is the first pass over one file.
func (x *index) read(ctx context.Context, file int32, path string) error {
	d := newDecoder(nil, 1, false, func(role, _ *text) { x.countRole(role) })
	return eachLine(ctx, path, func(s *scanner) (bool, error) {
		d.s = s
		line := s.line
		if err := d.record(); err != nil {
			return false, err
		}
		f := d.f
		r := rec{file: file, line: int32(line), conv: x.str(cmp.Or(f.conv, "(none)")), corr: x.str(f.corr),
			parent: x.str(f.parent), model: x.str(cmp.Or(f.model, "?")), turn: f.turn, depth: f.depth, start: f.start, hasTurn: f.hasTurn}
		x.recs = append(x.recs, r)
		if r.corr != 0 {
			x.corrConv[r.corr] = r.conv
		}
		x.messages += f.messages
		if f.payload {
			x.payloads++
		}
		return true, s.end()
	})
}

func (x *index) countRole(role *text) {
	name := role.String()
	if _, ok := x.roles[name]; !ok {
		if len(x.roles) >= maxRoles {
			name = "other"
		}
		if _, ok := x.roles[name]; !ok {
			x.order = append(x.order, name)
		}
	}
	x.roles[name]++
}

// legend is the role counts, most first (ties in order of appearance).
func (x *index) legend() []RoleCount {
	out := make([]RoleCount, 0, len(x.order))
	for _, r := range x.order {
		out = append(out, RoleCount{r, x.roles[r]})
	}
	slices.SortStableFunc(out, func(a, b RoleCount) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

// group is a conversation as shown: the records of a conversation_id
// sent by one session. Another session replaying the same conversation
// (a small dataset reused under concurrency) is a group of its own, as
// AIPerf numbers them: sessions by first arrival, or, without correlation
// ids, the repeats of a turn index.
type group struct {
	conv         int32
	replay       int32
	recs         []int32 // file order
	depth, start int64   // the least of its records'
	name         string  // the tie-break of the order, as AIPerf's
}

func (x *index) groups() []*group {
	byStart := make([]int32, len(x.recs))
	for i := range byStart {
		byStart[i] = int32(i)
	}
	slices.SortStableFunc(byStart, func(a, b int32) int { return cmp.Compare(x.recs[a].start, x.recs[b].start) })
	replay := make([]int32, len(x.recs))
	lanes, laneCount := map[[2]int32]int32{}, map[int32]int32{}
	repeats := map[turnKey]int32{}
	for _, i := range byStart {
		r := &x.recs[i]
		if r.corr == 0 {
			k := turnKey{r.conv, r.turn, r.hasTurn}
			replay[i] = repeats[k]
			repeats[k]++
			continue
		}
		lane, ok := lanes[[2]int32{r.conv, r.corr}]
		if !ok {
			lane = laneCount[r.conv]
			lanes[[2]int32{r.conv, r.corr}] = lane
			laneCount[r.conv]++
		}
		replay[i] = lane
	}
	byKey := map[[2]int32]*group{}
	var out []*group
	for i := range x.recs {
		r := &x.recs[i]
		g := byKey[[2]int32{r.conv, replay[i]}]
		if g == nil {
			g = &group{conv: r.conv, replay: replay[i], depth: r.depth, start: r.start, name: x.strs[r.conv]}
			if g.replay > 0 {
				g.name = fmt.Sprintf("%s · replay %d", g.name, g.replay+1)
			}
			byKey[[2]int32{r.conv, replay[i]}] = g
			out = append(out, g)
		}
		g.recs = append(g.recs, int32(i))
		g.depth, g.start = min(g.depth, r.depth), min(g.start, r.start)
	}
	slices.SortStableFunc(out, func(a, b *group) int {
		return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.start, b.start), strings.Compare(a.name, b.name))
	})
	return out
}

type turnKey struct {
	conv    int32
	turn    int64
	hasTurn bool
}

// conversation is a group as shown: its turns in order (by turn index,
// then time), the first maxTurns kept (their records returned), its
// parent, session and models.
func (x *index) conversation(g *group, maxTurns int) (Conversation, []int32) {
	recs := slices.Clone(g.recs)
	slices.SortStableFunc(recs, func(a, b int32) int {
		ra, rb := &x.recs[a], &x.recs[b]
		return cmp.Or(cmp.Compare(ra.turn, rb.turn), cmp.Compare(ra.start, rb.start))
	})
	c := Conversation{ID: x.strs[g.conv], Depth: g.depth, Replay: int(g.replay), TotalTurns: len(recs)}
	models := map[string]bool{}
	for _, r := range recs {
		models[x.strs[x.recs[r].model]] = true
		if p := x.recs[r].parent; c.Parent == "" && p != 0 {
			if pc, ok := x.corrConv[p]; ok {
				c.Parent = x.strs[pc]
			} else {
				c.Parent = "?" // the parent's session sent nothing the export kept
			}
		}
	}
	for m := range models {
		c.Models = append(c.Models, m)
	}
	slices.Sort(c.Models)
	if len(recs) > maxTurns {
		c.HiddenTurns, recs = len(recs)-maxTurns, recs[:maxTurns]
	}
	for _, r := range recs {
		if corr := x.recs[r].corr; c.Lane == "" && corr != 0 {
			c.Lane = x.strs[corr]
		}
	}
	c.Turns = make([]Turn, len(recs))
	return c, recs
}

type lineKey struct{ file, line int32 }

// slot is where a record's turn goes: View.Convs[conv].Turns[turn].
type slot struct{ conv, turn int }

// readMessages is the second pass: the records of the turns shown, read
// again, their messages interned.
func (v *View) readMessages(ctx context.Context, files []string, need map[lineKey]slot) error {
	left := make([]int, len(files))
	for k := range need {
		left[k.file]++
	}
	in := interner{ids: map[[2 * digestSize]byte]int{}, v: v}
	var cur *Turn
	d := newDecoder(nil, v.Options.ContentCap, true, func(role, content *text) {
		cur.Messages = append(cur.Messages, in.add(role, content))
	})
	for i, path := range files {
		if left[i] == 0 {
			continue
		}
		err := eachLine(ctx, path, func(s *scanner) (bool, error) {
			at, ok := need[lineKey{int32(i), int32(s.line)}]
			if !ok {
				return true, s.skipLine()
			}
			d.s, cur = s, &v.Convs[at.conv].Turns[at.turn]
			if err := d.record(); err != nil {
				return false, err
			}
			f := d.f
			cur.Index, cur.HasIndex, cur.Phase, cur.MaxTokens = f.turn, f.hasTurn, f.phase, f.maxTokens
			cur.Cancelled, cur.Failed = f.cancelled, f.failed
			left[i]--
			return left[i] > 0, s.end()
		})
		if err != nil {
			return err
		}
		if left[i] > 0 {
			return fmt.Errorf("%s: the file changed while it was read (is a run still writing it?)", path)
		}
	}
	return nil
}

const digestSize = 32 // sha256

// interner keeps each unique (role, body) once: its first appearance.
type interner struct {
	ids map[[2 * digestSize]byte]int
	v   *View
}

func (in *interner) add(role, content *text) int {
	k := [2 * digestSize]byte(content.digest(role.digest(make([]byte, 0, 2*digestSize))))
	if id, ok := in.ids[k]; ok {
		return id
	}
	name := role.String()
	if role.full {
		name += "…"
	}
	id := len(in.v.Msgs)
	in.v.Msgs = append(in.v.Msgs, Message{Role: name, Len: content.runes, Body: content.String(), Cut: content.cut()})
	in.ids[k] = id
	return id
}
