package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

// ParallelArg is `--parallel`, shared by `plan` (which describes the
// schedule) and `sweep` (which runs it).
type ParallelArg struct {
	Parallel int `name:"parallel" default:"1" placeholder:"N" help:"Run up to N trials at once, only of cells that load different servers (compared by the origins of their --url): cells sharing a server run one at a time in plan order, with the cooldowns between them (default ${default}: one trial at a time)."`
}

func (a ParallelArg) check() error {
	if a.Parallel < 1 {
		return usageErr(fmt.Errorf("--parallel must be at least 1, got %d (nothing was sent)", a.Parallel))
	}
	return nil
}

// describeSchedule tells how a sweep's trials will run with --parallel
// parallel: nothing with 1 on one server (today's sweep), else its server
// lanes and which cells share each one, or a note that they run serially.
// With resolve and parallel > 1 the lanes are runner.ServerLanes' (names of
// one machine's port merged, with its notes); else by spelling (a sweep's
// runner looks the names up itself, and says what it merged).
func describeSchedule(ctx context.Context, w io.Writer, sw plan.Sweep, parallel int, resolve bool) {
	lanes := sw.Lanes()
	if resolve && parallel > 1 {
		var notes []string
		lanes, notes = runner.ServerLanes(ctx, sw)
		for _, n := range notes {
			fmt.Fprintln(w, "note: "+n)
		}
	}
	switch {
	case len(lanes) <= 1 && parallel <= 1:
		return
	case len(lanes) <= 1:
		servers := "one server"
		if len(lanes) == 1 && len(lanes[0].Servers) > 0 {
			servers = strings.Join(lanes[0].Servers, ", ")
		}
		fmt.Fprintf(w, "note: --parallel %d: every cell of sweep %q loads %s, so its trials run one at a time\n", parallel, sw.Name, servers)
		return
	case parallel <= 1:
		fmt.Fprintf(w, "schedule: one trial at a time, in plan order (--parallel 1); its cells fall in %s, which --parallel %d would run at once:\n",
			plural(len(lanes), "server lane"), len(lanes))
	default:
		fmt.Fprintf(w, "schedule: up to %d trials at once (--parallel %d) on %s; cells sharing a server run one at a time, in plan order:\n",
			min(parallel, len(lanes)), parallel, plural(len(lanes), "server lane"))
	}
	for i, l := range lanes {
		fmt.Fprintf(w, "  lane %d %s: %s\n", i+1, strings.Join(l.Servers, " + "), cellList(l.Cells))
	}
}

// cellList names up to 6 cells, then how many more.
func cellList(cells []string) string {
	const shown = 6
	s := plural(len(cells), "cell") + " " + strings.Join(cells[:min(shown, len(cells))], ", ")
	if len(cells) > shown {
		s += fmt.Sprintf(" and %d more", len(cells)-shown)
	}
	return s
}
