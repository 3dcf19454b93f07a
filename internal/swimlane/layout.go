package swimlane

import (
	"container/heap"
	"slices"
)

// Layout places the sessions: lanes (a root session and its subagent
// sessions) packed into slots, each slot as many rows tall as its tallest
// lane needs.
type Layout struct {
	Lanes []Lane // by first start
	Slots []Slot // by number
	Rows  int    // the rows of every slot
}

// Lane is one session tree: a root session with the subagent sessions
// nested under it, drawn in one slot.
type Lane struct {
	Root        string // the tree's root id (its x_correlation_id)
	Slot        int
	Rows        int // the root's rows, then its subagents' rows
	First, Last int64
	Members     []Member // the root (when it made a request) first, then its subagents by start
}

// Member is a session's place in its lane.
type Member struct {
	Session int32
	Row0    int     // its first row in the lane
	Rows    int     // rows of its own: one per request overlapping the others
	Depths  []int32 // each request's row (of Run.SessionRequests), from Row0
}

// Slot is a lane position, reused once its lane has ended.
type Slot struct {
	Offset int     // its first row among all rows
	Rows   int     // its tallest lane's rows
	Lanes  []int32 // its lanes, in time order
}

// NewLayout lays the run's sessions out as AIPerf's swim lane does. A
// session costs no allocation of its own: the lanes' members and the
// requests' rows are windows of one slice each.
func NewLayout(r *Run) *Layout {
	keys, members := lanesOf(r)
	l := &Layout{Lanes: make([]Lane, len(keys))}
	b := &laneBufs{members: make([]Member, 0, len(r.Sessions)), depths: make([]int32, len(r.Requests))}
	for i, key := range keys {
		l.Lanes[i] = r.lane(key, members(i), b)
	}
	// By first start, then first end, then first seen: the slots' order.
	slices.SortStableFunc(l.Lanes, func(a, b Lane) int {
		if c := cmpInt64(a.First, b.First); c != 0 {
			return c
		}
		return cmpInt64(a.Last, b.Last)
	})
	spans := make([][2]int64, len(l.Lanes))
	for i, ln := range l.Lanes {
		spans[i] = [2]int64{ln.First, ln.Last}
	}
	slots, n := pack(spans)
	l.Slots = make([]Slot, n)
	for i, s := range slots {
		l.Lanes[i].Slot = s
		sl := &l.Slots[s]
		sl.Lanes = append(sl.Lanes, int32(i))
		sl.Rows = max(sl.Rows, l.Lanes[i].Rows, 1)
	}
	for i := range l.Slots {
		l.Slots[i].Offset = l.Rows
		l.Rows += l.Slots[i].Rows
	}
	return l
}

// laneBufs are the slices the lanes' members and rows are cut from.
type laneBufs struct {
	members []Member // a member per session
	depths  []int32  // a row per request, at its place in Run.order
}

// lanesOf groups the sessions into lanes: each session's lane key is its
// tree's root (rootOf), a key naming no session of the run being a
// phantom root, a lane of subagents only. It returns the keys in first-seen
// order and each lane's sessions (by index). A run without parent or root
// ids has a lane per session, found without a map.
func lanesOf(r *Run) ([]string, func(i int) []int32) {
	if !slices.ContainsFunc(r.Sessions, func(s Session) bool { return s.Parent != "" || s.Root != "" }) {
		keys := make([]string, len(r.Sessions))
		for i, s := range r.Sessions {
			keys[i] = s.ID
		}
		one := make([]int32, 1) // lane reads it, keeping none of it
		return keys, func(i int) []int32 { one[0] = int32(i); return one }
	}
	roots := rootOf(r)
	at := map[string]int{}
	var keys []string
	var members [][]int32
	for s, key := range roots {
		i, ok := at[key]
		if !ok {
			i = len(keys)
			at[key] = i
			keys = append(keys, key)
			members = append(members, nil)
		}
		members[i] = append(members[i], int32(s))
	}
	return keys, func(i int) []int32 { return members[i] }
}

// rootOf is each session's lane key. With root_correlation_id in the
// export, a session keys on its records' root id (its own id when none);
// without, it walks parent_correlation_id up through the sessions of the
// run: to a session without a parent (the root), or to a parent absent
// from the run (a phantom root, shared by that parent's subagents); a
// cycle detaches the session to itself.
func rootOf(r *Run) []string {
	out := make([]string, len(r.Sessions))
	withRoot := slices.ContainsFunc(r.Sessions, func(s Session) bool { return s.Root != "" })
	byID := make(map[string]int, len(r.Sessions))
	for i, s := range r.Sessions {
		byID[s.ID] = i
	}
	for i, s := range r.Sessions {
		if withRoot || s.Parent == "" {
			out[i] = cmpOr(s.Root, s.ID)
			continue
		}
		seen := map[int]bool{i: true}
		cur := i
		for {
			p := r.Sessions[cur].Parent
			j, ok := byID[p]
			if p != "" && ok && !seen[j] {
				seen[j] = true
				cur = j
				continue
			}
			switch {
			case p == "":
				out[i] = r.Sessions[cur].ID
			case ok: // a cycle, or a session its own parent
				out[i] = s.ID
			default: // the parent is absent: a phantom root
				out[i] = p
			}
			break
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// lane lays out one lane: the root session's requests in rows of their own
// (a request starting before an earlier one ended takes the next row),
// then each subagent session, by first start, in the first window of rows
// below the root's that every earlier subagent has left. Its members and
// their rows are cut from b.
func (r *Run) lane(key string, sessions []int32, b *laneBufs) Lane {
	ln := Lane{Root: key, First: r.Sessions[sessions[0]].First, Last: r.Sessions[sessions[0]].Last}
	off := len(b.members)
	ln.Members = b.members[off:off:min(off+len(sessions), cap(b.members))]
	root := -1
	for _, s := range sessions {
		ss := r.Sessions[s]
		ln.First, ln.Last = min(ln.First, ss.First), max(ln.Last, ss.Last)
		if ss.ID == key {
			root = int(s)
		}
	}
	if root >= 0 {
		depths, rows := r.depths(root, b.depths)
		ln.Members = append(ln.Members, Member{Session: int32(root), Rows: rows, Depths: depths})
		ln.Rows = rows
	}
	var kids []int32
	if len(sessions) > 1 || root < 0 {
		kids = slices.DeleteFunc(slices.Clone(sessions), func(s int32) bool { return int(s) == root })
		slices.SortStableFunc(kids, func(a, b int32) int { return cmpInt64(r.Sessions[a].First, r.Sessions[b].First) })
	}
	var ends []int64 // each child row's last end
	for _, k := range kids {
		depths, rows := r.depths(int(k), b.depths)
		start, end := r.Sessions[k].First, r.Sessions[k].Last
		row := 0
		for ; row < len(ends); row++ {
			free := true
			for j := row; j < row+rows && j < len(ends); j++ {
				if ends[j] > start {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		for len(ends) < row+rows {
			ends = append(ends, 0)
		}
		for j := row; j < row+rows; j++ {
			ends[j] = end
		}
		ln.Members = append(ln.Members, Member{Session: k, Row0: ln.Rows + row, Rows: rows, Depths: depths})
	}
	ln.Rows += len(ends)
	b.members = b.members[:off+len(ln.Members)]
	return ln
}

// depths stacks a session's requests: each takes the lowest row whose
// last request has ended when it starts. It returns each request's row (in
// the order of SessionRequests, the session's window of all, a row per
// request of the run at its place in Run.order) and the rows used.
func (r *Run) depths(s int, all []int32) ([]int32, int) {
	ss := r.Sessions[s]
	out := all[ss.off : ss.off+ss.n : ss.off+ss.n]
	reqs := r.SessionRequests(s)
	if len(reqs) == 1 {
		out[0] = 0
		return out, 1
	}
	spans := make([][2]int64, len(reqs))
	for i, q := range reqs {
		spans[i] = [2]int64{r.Requests[q].Start, r.Requests[q].End}
	}
	byStart := make([]int, len(spans))
	for i := range byStart {
		byStart[i] = i
	}
	slices.SortStableFunc(byStart, func(a, b int) int { return cmpInt64(spans[a][0], spans[b][0]) })
	sorted := make([][2]int64, len(spans))
	for i, j := range byStart {
		sorted[i] = spans[j]
	}
	rows, n := pack(sorted)
	for i, j := range byStart {
		out[j] = int32(rows[i])
	}
	return out, n
}

// pack assigns spans sorted by start to the lowest-numbered position free
// at their start (its last span ended at or before it), a new one when
// none is: AIPerf's greedy slot packing, in n log n. It returns each
// span's position and the positions used.
func pack(spans [][2]int64) ([]int, int) {
	out := make([]int, len(spans))
	var busy busyHeap
	var free intHeap
	n := 0
	for i, sp := range spans {
		for busy.Len() > 0 && busy[0].end <= sp[0] {
			heap.Push(&free, heap.Pop(&busy).(busySlot).slot)
		}
		var slot int
		if free.Len() > 0 {
			slot = heap.Pop(&free).(int)
		} else {
			slot = n
			n++
		}
		out[i] = slot
		heap.Push(&busy, busySlot{end: sp[1], slot: slot})
	}
	return out, n
}

type busySlot struct {
	end  int64
	slot int
}

type busyHeap []busySlot

func (h busyHeap) Len() int           { return len(h) }
func (h busyHeap) Less(i, j int) bool { return h[i].end < h[j].end }
func (h busyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *busyHeap) Push(x any)        { *h = append(*h, x.(busySlot)) }
func (h *busyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
