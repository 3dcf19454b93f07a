package dashboard

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// Interval is how often the dashboard takes a snapshot and redraws.
const Interval = 250 * time.Millisecond

// closeWait bounds how long Close waits for the final frame before it
// ends the program anyway (restoring the terminal).
const closeWait = 10 * time.Second

// Usable reports whether the dashboard can be drawn: both stdout and
// stderr are terminals (it draws on stderr; a captured stdout means a
// script is reading, so the plain progress line is kept), and $TERM names
// one that moves the cursor: a dumb terminal (TERM=dumb or unset: Emacs'
// shell, a CI log viewer on a pty) would print the drawing as garbage.
func Usable(stdout, stderr io.Writer) bool {
	return drawable(os.Getenv("TERM")) && isTerminal(stdout) && isTerminal(stderr)
}

// drawable reports whether a terminal of type term can be drawn on.
func drawable(term string) bool { return term != "" && term != "dumb" }

func isTerminal(w io.Writer) bool {
	f := termsafe.File(w) // through the writers that lock, redact or mark it
	return f != nil && term.IsTerminal(f.Fd())
}

// Options configure a dashboard.
type Options struct {
	Title     string // what is being run, shown on the first line
	Streaming bool   // the run streams: TTFT and ITL are shown
	// Fallback receives the log lines written after the dashboard closed
	// (or once its program ended).
	Fallback io.Writer
	// Program adds options to the Bubble Tea program (tests: a window
	// size for an output that is not a terminal).
	Program []tea.ProgramOption
}

// Dashboard runs the live view on its own goroutine from Start to Close.
// It implements bench.Watcher: Watch hands it the engine's counters,
// Record each finished record.
type Dashboard struct {
	prog *tea.Program
	done chan struct{}
	err  error // the program's, once done is closed

	source atomic.Pointer[source]
	mu     sync.Mutex
	queue  []Finished   // not shown yet
	batch  atomic.Int64 // the previous snapshot's count of finished requests
	stream bool         // the run streams

	logMu    sync.Mutex
	open     bool // log lines go to the program
	fallback io.Writer
	partial  []byte // a log line not ended yet
}

type source struct {
	progress func() *load.Progress
	clock    load.Clock
}

// Start draws the dashboard on out until Close. Input is left alone (the
// terminal stays as it is, Ctrl-C interrupts the run as without it) and
// signals are the caller's.
func Start(out io.Writer, o Options) *Dashboard {
	d := &Dashboard{done: make(chan struct{}), open: true, fallback: o.Fallback, stream: o.Streaming}
	if d.fallback == nil {
		d.fallback = io.Discard
	}
	opts := append([]tea.ProgramOption{tea.WithOutput(out), tea.WithInput(nil), tea.WithoutSignalHandler(),
		tea.WithFPS(int(time.Second / Interval))}, o.Program...)
	d.prog = tea.NewProgram(NewModel(o.Title, o.Streaming, Interval, d.snapshot), opts...)
	go func() {
		defer close(d.done)
		_, err := d.prog.Run()
		d.logMu.Lock()
		d.open = false
		d.logMu.Unlock()
		d.err = err
	}()
	return d
}

// Watch is handed the engine's live counters when the load starts.
func (d *Dashboard) Watch(progress func() *load.Progress, clock load.Clock) {
	d.source.Store(&source{progress, clock})
}

// Record queues what is shown of a finished record for the next snapshot;
// it never waits on the drawing.
func (d *Dashboard) Record(r *metrics.Record) {
	f := FinishedOf(r, d.stream)
	d.mu.Lock()
	d.queue = append(d.queue, f)
	d.mu.Unlock()
}

// snapshot reads the counters (done before sent, so that in flight is
// never negative) and takes the queued requests.
func (d *Dashboard) snapshot() Snapshot {
	var s Snapshot
	next := make([]Finished, 0, max(64, d.batch.Load())) // allocated here, not while recording
	d.mu.Lock()
	s.Finished, d.queue = d.queue, next
	d.mu.Unlock()
	d.batch.Store(int64(len(s.Finished)))
	src := d.source.Load()
	if src == nil {
		return s
	}
	pr := src.progress()
	if pr == nil {
		return s
	}
	s.Phase = pr.Phase
	s.ElapsedS = float64(src.clock.Now()-pr.StartNs) / 1e9
	s.Done = pr.Done.Load()
	s.Sent = pr.Sent.Load()
	s.Errors = pr.Errors.Load()
	return s
}

// Log is a writer for the run's log: its lines are printed above the
// dashboard while it runs, to the fallback after.
func (d *Dashboard) Log() io.Writer { return logWriter{d} }

type logWriter struct{ d *Dashboard }

func (w logWriter) Write(p []byte) (int, error) {
	d := w.d
	d.logMu.Lock()
	defer d.logMu.Unlock()
	if !d.open {
		return d.fallback.Write(p)
	}
	d.partial = append(d.partial, p...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		d.prog.Send(logMsg(d.partial[:i])) // returns at once once the program ended
		d.partial = d.partial[i+1:]
	}
	return len(p), nil
}

// Abort ends the program at once, restoring the terminal (the cursor
// shown), for a process about to exit without Close.
func (d *Dashboard) Abort() { d.prog.Kill() }

// Close draws the final snapshot, ends the program (restoring the
// terminal) and returns its error.
func (d *Dashboard) Close() error {
	d.logMu.Lock()
	if d.open && len(d.partial) > 0 {
		d.prog.Send(logMsg(d.partial))
	}
	d.open, d.partial = false, nil
	d.logMu.Unlock()
	s := d.snapshot()
	s.Final = true
	d.prog.Send(s)
	select {
	case <-d.done:
	case <-time.After(closeWait): // never hold the run's end on the drawing
		d.prog.Kill()
		select {
		case <-d.done:
		case <-time.After(closeWait): // stuck writing to the terminal (^S): leave it
		}
		return fmt.Errorf("draw the dashboard: no final frame within %s, ended it", closeWait)
	}
	if d.err != nil {
		return fmt.Errorf("draw the dashboard: %w", d.err)
	}
	return nil
}
