package main

import (
	"fmt"
	"strings"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/dashboard"
	"github.com/aiperf-go/aiperf/internal/termsafe"
	"github.com/aiperf-go/aiperf/runner"
)

// dashboard starts --ui dashboard when both stdout and stderr are
// terminals (else the simple progress line stays): it draws on stderr,
// takes the run's counters and records, and prints the run's log above
// itself. The returned function ends it once the run returned.
func (c *ProfileCmd) dashboard(g *Globals, spec runner.Spec, opts *bench.Options) (stop func()) {
	term := termsafe.Raw(g.Stderr) // drawn on: the dashboard escapes what it shows
	if c.UI != "dashboard" || !dashboard.Usable(termsafe.Raw(g.Stdout), term) {
		return func() {}
	}
	title := spec.Name
	if title == "" {
		title = strings.Join(spec.Profile.Model, ", ")
	}
	d := dashboard.Start(term, dashboard.Options{Title: title, Streaming: spec.Profile.Streams(), Fallback: g.Stderr})
	opts.Watch, opts.Progress = d, nil
	opts.Log = spec.Profile.Redactor().Writer(d.Log())
	onTerminal.Store(&liveView{notes: d.Log(), restore: d.Abort})
	return func() {
		onTerminal.Store(nil)
		if err := d.Close(); err != nil {
			fmt.Fprintf(g.Stderr, "warning: %s\n", err)
		}
	}
}
