package load

import (
	"cmp"
	"container/heap"
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// MeanTurner is a Source that knows the mean number of turns of its
// conversations; user-centric mode sizes its virtual history on it (a Source
// without it counts as one turn per conversation).
type MeanTurner interface {
	MeanTurns() float64
}

// userPlan is one user of user-centric mode: when its first turn is due
// and how many turns it sends (0: every turn of its conversation).
type userPlan struct {
	at       int64 // ns from the phase's start
	maxTurns int
}

// initialUsers is AIPerf's virtual history: n users spread over a session
// lifetime of turns-1 gaps, so the phase starts in steady state. User i has
// already sent (n-i)·lifetime/n of its turns; the oldest is done and is
// replaced by a new user at 0, and the others start stagger apart in an
// order that mixes old and young users. It returns the users to start and
// the first spawn time each one's end implies (ns from the start).
func initialUsers(n, turns int, stagger, gap float64) ([]userPlan, []int64) {
	lifetime := max(1, turns-1)
	step := 0
	if gcd(n, lifetime) > 1 { // the formula would give duplicate positions
		step = 1
		for s := 2; s < n; s++ {
			if gcd(n, s) == 1 {
				step = s
				break
			}
		}
	}
	var users []userPlan
	var spawns []int64
	add := func(order, maxTurns, spawnTurns int) {
		at := float64(order) * stagger
		users = append(users, userPlan{at: secondsNs(at), maxTurns: maxTurns})
		spawns = append(spawns, secondsNs(at+float64(spawnTurns)*gap))
	}
	for i := range n {
		age := (n - i) * lifetime
		left := lifetime - age/n
		if left <= 0 {
			continue // virtually done before the start
		}
		slot := age % n
		if step > 0 {
			slot = i * step % n
		}
		add(n-slot, left, left)
	}
	add(0, 0, turns) // the replacement of the user who is done
	return users, spawns
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func secondsNs(s float64) int64 { return int64(math.Round(s * 1e9)) }

// spawnQueue is a min-heap of spawn times.
type spawnQueue []int64

func (q spawnQueue) Len() int           { return len(q) }
func (q spawnQueue) Less(i, j int) bool { return q[i] < q[j] }
func (q spawnQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *spawnQueue) Push(x any)        { *q = append(*q, x.(int64)) }
func (q *spawnQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// issueUsers runs AIPerf's user-centric mode (--user-centric-rate Q
// --num-users U): each user sends its turns gap = U/Q apart, the next turn
// due at max(reply, previous due + gap), never two at once; the users
// start from a virtual history (initialUsers), and new users are spawned on
// a fixed schedule, each at the time its predecessor's turns would have
// ended (spawn + turns·gap), so the total rate stays Q whatever the
// response times. Session delays are not used. With a cap, a user waits
// for a free slot before its first turn (counted as cap-delayed). It
// returns when the phase stops issuing, its count is sent, or no user may
// start and every user is done.
func (p *phaseRun) issueUsers() {
	n, rate := p.ph.Users, p.ph.Rate
	turns := 1
	if m, ok := p.e.Source.(MeanTurner); ok {
		turns = max(1, int(math.Round(m.MeanTurns())))
	}
	stagger, gap := 1/rate, float64(n)/rate
	initial, spawns := initialUsers(n, turns, stagger, gap)
	var slots chan struct{}
	if p.ph.Concurrency > 0 {
		slots = make(chan struct{}, p.ph.Concurrency)
	}
	// users ends with the issuer: a user waiting for its next turn then
	// sends nothing more.
	users, stop := context.WithCancel(p.issueCtx)
	defer stop()
	var running sync.WaitGroup
	start := p.r.StartNs
	gapNs := secondsNs(gap)
	// Each user's conversation is drawn here, in the order the users start,
	// not by its goroutine: a seed gives each start time its conversation.
	slices.SortStableFunc(initial, func(a, b userPlan) int { return cmp.Compare(a.at, b.at) })
	for _, u := range initial {
		s := p.e.Source.Next()
		running.Go(func() { p.runUser(users, s, u.maxTurns, start+u.at, gapNs, slots) })
	}
	stopped := make(chan struct{})
	go func() {
		defer func() { running.Wait(); close(stopped) }()
		q := spawnQueue(spawns)
		heap.Init(&q)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for q.Len() > 0 {
			at := start + heap.Pop(&q).(int64)
			if p.pastEnd(at) { // as rate mode: no user joins at or after the end
				<-users.Done()
				return
			}
			if !p.e.waitUntil(users, timer, at) || !p.canStartSession() {
				return
			}
			s := p.e.Source.Next()
			running.Go(func() { p.runUser(users, s, 0, at, gapNs, slots) })
			heap.Push(&q, at-start+secondsNs(float64(turns)*gap))
		}
	}()
	select {
	case <-p.full:
	case <-p.issueCtx.Done():
	case <-stopped:
	}
}

// runUser sends the turns of user s (at most maxTurns; 0: all), the first
// at at, each next one gap after the previous one was due or at its reply,
// whichever is later. A turn due at or after the end of the phase's
// duration is not sent, as in rate mode: which timer fired first, the
// turn's or the duration's, does not decide it.
func (p *phaseRun) runUser(ctx context.Context, s Session, maxTurns int, at, gap int64, slots chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	if p.pastEnd(at) || !p.e.waitUntil(ctx, timer, at) || !p.takeSlot(slots) {
		return
	}
	defer releaseSlot(slots)
	sid, ok := p.startSession()
	if !ok {
		return
	}
	due := at
	for i := 0; ; i++ {
		c, ok := p.claim(due, sid, i)
		if !ok {
			return
		}
		if _, ok := p.send(s, i, c); !ok {
			return
		}
		if i+1 >= s.Turns() || maxTurns > 0 && i+1 >= maxTurns {
			return
		}
		due = max(p.e.Clock.Now(), due+gap)
		if p.pastEnd(due) || !p.e.waitUntil(ctx, timer, due) {
			return
		}
	}
}
