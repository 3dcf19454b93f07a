package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// startProgress prints the counters of the phase under way (progress) to
// w until the returned stop function is called: a self-overwriting line on
// a terminal, a plain line every 5 s otherwise (CI logs stay readable).
// A phase of N sessions shows its total as N × perSession requests.
// perSession is the requests a session sends (its conversation's turns),
// for a phase that counts sessions; exact says every session sends that
// many, else the total shown is an estimate ("~"). note is added to the
// line when it says something (the sending stopped early).
func startProgress(w io.Writer, progress func() *load.Progress, clock load.Clock, perSession float64, exact bool,
	note func() string) (stop func()) {
	if w == nil {
		return func() {}
	}
	tty := isTerminal(w)
	every := 5 * time.Second
	if tty {
		every = 250 * time.Millisecond
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprintf(w, "\r%s\n", line(progress, clock, perSession, exact, note))
				}
				return
			case <-t.C:
				if tty {
					fmt.Fprintf(w, "\r%s", line(progress, clock, perSession, exact, note))
				} else {
					fmt.Fprintln(w, line(progress, clock, perSession, exact, note))
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func line(progress func() *load.Progress, clock load.Clock, perSession float64, exact bool, note func() string) string {
	pr := progress()
	if pr == nil {
		return "starting..."
	}
	ph := pr.Phase
	elapsed := float64(clock.Now()-pr.StartNs) / 1e9
	done := pr.Done.Load()
	total := "?"
	switch {
	case ph.Requests > 0:
		total = fmt.Sprint(ph.Requests)
	case ph.Sessions > 0 && perSession > 0 && exact:
		total = fmt.Sprint(int(math.Round(float64(ph.Sessions) * perSession)))
	case ph.Sessions > 0 && perSession > 0:
		total = fmt.Sprintf("~%d", int(math.Round(float64(ph.Sessions)*perSession)))
	case ph.Duration > 0:
		total = fmt.Sprintf("%.0fs", ph.Duration)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed
	}
	stopped := ""
	if n := note(); n != "" {
		stopped = ", " + n
	}
	return fmt.Sprintf("[%s] %d/%s done, %d in flight, %.1f req/s, %d errors, %.1fs elapsed%s   ",
		termsafe.Text(ph.Name), done, total, pr.Sent.Load()-done, rate, pr.Errors.Load(), elapsed, stopped)
}

func isTerminal(w io.Writer) bool {
	f := termsafe.File(w) // through the writers that lock, redact or mark it
	if f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// watchers is every watcher of a run as one (nil: none): the dashboard's
// and the exporters', each record handed to each in turn.
func watchers(w Watcher, exporters []Exporter) Watcher {
	all := make(fanOut, 0, len(exporters)+1)
	if w != nil {
		all = append(all, w)
	}
	for _, e := range exporters {
		all = append(all, e)
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return all
}

// fanOut hands each record to several watchers.
type fanOut []Watcher

func (f fanOut) Watch(progress func() *load.Progress, clock load.Clock) {
	for _, w := range f {
		w.Watch(progress, clock)
	}
}

func (f fanOut) Record(r *metrics.Record) {
	for _, w := range f {
		w.Record(r)
	}
}
