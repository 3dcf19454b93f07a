package dashboard

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// Snapshot is what the dashboard is shown at each tick: the counters of
// the phase issuing now and the requests finished since the previous one.
type Snapshot struct {
	Phase              *plan.Phase // nil before the load starts
	ElapsedS           float64     // since the phase began sending
	Sent, Done, Errors int64       // the phase's counters
	Finished           []Finished
	Final              bool // the run ended: draw once more and quit
}

// Finished is what the dashboard keeps of a finished request.
type Finished struct {
	Phase     string
	Cancelled bool
	Stopped   bool   // cut by a Ctrl-C: the phase was stopped before its end
	Error     string // the failure's kind, with its HTTP status ("" when it succeeded)
	TTFTMs    float64
	ITLMs     float64
	HasTTFT   bool
	HasITL    bool
}

// FinishedOf takes what the dashboard shows of a finished record.
func FinishedOf(r *metrics.Record, streaming bool) Finished {
	f := Finished{Phase: r.Phase, Cancelled: r.Cancelled, Stopped: r.Cancelled && r.CutBy == metrics.CutInterrupt}
	switch {
	case r.Cancelled:
	case r.Error != nil:
		f.Error = r.Error.Type
		if r.Error.Code != 0 {
			f.Error = fmt.Sprintf("%s %d", f.Error, r.Error.Code)
		}
	default:
		t := metrics.Times(r, streaming)
		f.HasTTFT, f.TTFTMs = t.Streamed, float64(t.TTFTNs)/1e6
		f.HasITL, f.ITLMs = t.HasITL, t.ITLNs/1e6
	}
	return f
}

// logMsg is a line of the run's log, printed above the view.
type logMsg string

// printedMsg follows a logMsg's line once it was printed.
type printedMsg struct{}

// tickMsg asks for the next snapshot.
type tickMsg struct{}

// Model is the dashboard's Bubble Tea model. Its fields are only touched
// by Update, on the program's goroutine.
type Model struct {
	title     string
	streaming bool
	every     time.Duration
	take      func() Snapshot // nil: the model is only fed snapshots

	now      Snapshot // without its records
	printing int      // log lines sent to print, not printed yet
	phases   map[string]*phaseStats
	recent   []sample // the current phase's (elapsed, done), the last ~2 s
}

// phaseStats is what the records of one phase add up to.
type phaseStats struct {
	ttft, itl hist
	errors    map[string]int
	errOrder  []string // error kinds in first-seen order
	cut       int64    // requests cut before they ended (on purpose, or by a Ctrl-C)
	stopped   bool     // a Ctrl-C cut one of them
}

type sample struct {
	t    float64
	done int64
}

// NewModel returns a model drawing title; take, when set, is called for a
// snapshot every interval, on a command goroutine.
func NewModel(title string, streaming bool, every time.Duration, take func() Snapshot) Model {
	return Model{title: title, streaming: streaming, every: every, take: take, phases: map[string]*phaseStats{}}
}

func (m Model) Init() tea.Cmd { return m.tick() }

func (m Model) tick() tea.Cmd {
	if m.take == nil {
		return nil
	}
	return tea.Tick(m.every, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tickMsg:
		if m.now.Final {
			return m, nil
		}
		take := m.take
		return m, func() tea.Msg { return take() }
	case Snapshot:
		m.fold(msg)
		return m, m.next()
	case logMsg:
		m.printing++
		return m, tea.Sequence(tea.Println(termsafe.Text(string(msg))), func() tea.Msg { return printedMsg{} })
	case printedMsg:
		m.printing--
		if m.now.Final {
			return m, m.next()
		}
	}
	return m, nil
}

// next is what follows a snapshot: the next tick, or once the run ended
// and every log line is printed, the end.
func (m Model) next() tea.Cmd {
	switch {
	case !m.now.Final:
		return m.tick()
	case m.printing == 0:
		return tea.Quit
	}
	return nil
}

// fold takes a snapshot in: its counters replace the previous ones, its
// finished requests are added to their phases' estimates.
//
// Once the final snapshot is in, a later one can only be a tick's taken
// before it: its records are added, its older counters are not, and the
// run stays ended (else the ticks would start again and the program would
// never quit).
func (m *Model) fold(s Snapshot) {
	if !m.now.Final && s.Phase != nil && (m.now.Phase == nil || m.now.Phase.Name != s.Phase.Name) {
		m.recent = m.recent[:0]
	}
	for i := range s.Finished {
		m.add(&s.Finished[i])
	}
	if m.now.Final {
		return
	}
	s.Finished = nil
	m.now = s
	if s.Phase != nil {
		m.recent = append(m.recent, sample{s.ElapsedS, s.Done})
		cut := 0
		for cut < len(m.recent)-2 && s.ElapsedS-m.recent[cut+1].t >= 1 {
			cut++
		}
		m.recent = m.recent[cut:]
	}
}

func (m *Model) add(f *Finished) {
	ps := m.phases[f.Phase]
	if ps == nil {
		ps = &phaseStats{errors: map[string]int{}}
		m.phases[f.Phase] = ps
	}
	switch {
	case f.Cancelled:
		ps.cut++
		ps.stopped = ps.stopped || f.Stopped
	case f.Error != "":
		if ps.errors[f.Error] == 0 {
			ps.errOrder = append(ps.errOrder, f.Error)
		}
		ps.errors[f.Error]++
	default:
		if f.HasTTFT {
			ps.ttft.add(f.TTFTMs)
		}
		if f.HasITL {
			ps.itl.add(f.ITLMs)
		}
	}
}

// barWidth is the progress bar's width in cells.
const barWidth = 30

func (m Model) View() tea.View { return tea.NewView(m.Render()) }

// Render is the dashboard's text, with the control characters of its parts
// (the run's name, a phase's, an error's kind) escaped.
func (m Model) Render() string { return termsafe.Lines(m.render()) }

func (m Model) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "aiperf dashboard · %s\n", m.title)
	ph := m.now.Phase
	if ph == nil {
		b.WriteString("phase       starting...\n")
		return b.String()
	}
	done := ""
	switch {
	case m.now.Final && m.short():
		done = " · stopped before its end"
	case m.now.Final:
		done = " · done"
	}
	name := ph.Name
	if ph.Kind != ph.Name {
		name += " (" + ph.Kind + ")"
	}
	fmt.Fprintf(&b, "phase       %s · %.1f s elapsed%s%s\n", name, m.now.ElapsedS, m.eta(), done)
	fmt.Fprintf(&b, "progress    %s\n", m.progress())
	fmt.Fprintf(&b, "in flight   %d%s\n", m.now.Sent-m.now.Done, capNote(ph))
	b.WriteString(m.rates())
	ps := m.phases[ph.Name]
	if ps == nil {
		ps = &phaseStats{}
	}
	if m.streaming {
		fmt.Fprintf(&b, "TTFT ms     %s\n", percentiles(&ps.ttft))
		fmt.Fprintf(&b, "ITL ms      %s\n", percentiles(&ps.itl))
	}
	fmt.Fprintf(&b, "errors      %s\n", ps.errorLine(m.now.Errors))
	return b.String()
}

// cut is how many of the phase's requests were cut before they ended.
func (m Model) cut() int64 {
	if ps := m.phases[m.now.Phase.Name]; ps != nil {
		return ps.cut
	}
	return 0
}

// short reports whether the phase ended before any of its stops (its
// requests all returned, its duration passed and its grace period's
// requests returned): the run was interrupted, or a Ctrl-C cut requests
// of it (in its grace period, past its duration).
func (m Model) short() bool {
	ph := m.now.Phase
	if ps := m.phases[ph.Name]; ps != nil && ps.stopped {
		return true
	}
	if ph.Requests == 0 && ph.Duration == 0 {
		return false
	}
	return (ph.Requests == 0 || m.now.Done < int64(ph.Requests)) && (ph.Duration == 0 || m.now.ElapsedS < ph.Duration)
}

// fraction is how far the phase is, 0..1, and whether that is known.
func (m Model) fraction() (float64, bool) {
	ph := m.now.Phase
	switch {
	case ph.Requests > 0:
		return min(float64(m.now.Done)/float64(ph.Requests), 1), true
	case ph.Duration > 0:
		return min(m.now.ElapsedS/ph.Duration, 1), true
	}
	return 0, false
}

func (m Model) progress() string {
	ph := m.now.Phase
	f, ok := m.fraction()
	cut := ""
	if n := m.cut(); n > 0 {
		cut = fmt.Sprintf(" (%d of them cut)", n)
	}
	if !ok {
		return fmt.Sprintf("%d requests done%s", m.now.Done, cut)
	}
	fill := int(f * barWidth)
	bar := "[" + strings.Repeat("#", fill) + strings.Repeat("-", barWidth-fill) + "]"
	if ph.Requests > 0 {
		return fmt.Sprintf("%s %3.0f%%  %d/%d requests%s", bar, f*100, m.now.Done, ph.Requests, cut)
	}
	return fmt.Sprintf("%s %3.0f%%  %.1f/%g s, %d requests done%s", bar, f*100, m.now.ElapsedS, ph.Duration, m.now.Done, cut)
}

// eta is the phase's time left: its duration's rest, or its requests left
// at the rate they completed so far.
func (m Model) eta() string {
	ph := m.now.Phase
	if m.now.Final {
		return ""
	}
	switch {
	case ph.Duration > 0:
		return fmt.Sprintf(" · ETA %.1f s", max(ph.Duration-m.now.ElapsedS, 0))
	case ph.Requests > 0 && m.now.Done > 0 && m.now.ElapsedS > 0:
		left := float64(int64(ph.Requests)-m.now.Done) / (float64(m.now.Done) / m.now.ElapsedS)
		return fmt.Sprintf(" · ETA %.1f s", max(left, 0))
	}
	return ""
}

func capNote(ph *plan.Phase) string {
	switch {
	case ph.Rate > 0 && ph.Concurrency > 0:
		return fmt.Sprintf(" (cap %d)", ph.Concurrency)
	case ph.Rate == 0 && ph.Concurrency > 0:
		return fmt.Sprintf(" of %d slots", ph.Concurrency)
	}
	return ""
}

// rates is the target and what was achieved: in rate mode the send rate
// against the target rate; in every mode the completion rate, overall and
// over about the last second.
func (m Model) rates() string {
	ph, s := m.now.Phase, m.now
	per := func(n int64) float64 {
		if s.ElapsedS <= 0 {
			return 0
		}
		return float64(n) / s.ElapsedS
	}
	var b strings.Builder
	switch {
	case ph.Rate > 0:
		mode := ph.RateMode
		if mode == "" {
			mode = plan.RateConstant
		}
		fmt.Fprintf(&b, "target      %.1f req/s (%s)\n", ph.Rate, mode)
		fmt.Fprintf(&b, "sending     %.1f req/s\n", per(s.Sent))
	case ph.Fixed:
		b.WriteString("target      the fixed schedule\n")
	case ph.Concurrency > 0:
		fmt.Fprintf(&b, "target      concurrency %d\n", ph.Concurrency)
	}
	fmt.Fprintf(&b, "completing  %.1f req/s", per(s.Done-m.cut()))
	if n := len(m.recent); n >= 2 && m.recent[n-1].t > m.recent[0].t {
		a, z := m.recent[0], m.recent[n-1]
		fmt.Fprintf(&b, " · last %.1f s: %.1f req/s", z.t-a.t, float64(z.done-a.done)/(z.t-a.t))
	}
	b.WriteString("\n")
	return b.String()
}

// percentiles is p50, p90 and p99 of an estimate.
func percentiles(h *hist) string {
	if h.n == 0 {
		return "-"
	}
	var parts []string
	for _, p := range []float64{50, 90, 99} {
		v, _ := h.quantile(p)
		parts = append(parts, fmt.Sprintf("p%.0f %s", p, num(v)))
	}
	return strings.Join(parts, " · ") + fmt.Sprintf("  (%d requests)", h.n)
}

// num shows three significant digits (the estimate's precision).
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// errorLine is the phase's error count, from its counter, and the finished
// failures by kind, most frequent first.
func (ps *phaseStats) errorLine(count int64) string {
	if count == 0 && len(ps.errOrder) == 0 {
		return "0"
	}
	kinds := slices.Clone(ps.errOrder)
	slices.SortStableFunc(kinds, func(a, b string) int { return ps.errors[b] - ps.errors[a] })
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s: %d", k, ps.errors[k]))
	}
	if len(parts) == 0 {
		return fmt.Sprint(count)
	}
	return fmt.Sprintf("%d · %s", count, strings.Join(parts, " · "))
}
