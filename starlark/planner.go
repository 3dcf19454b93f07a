package starlark

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/aiperf-go/aiperf/internal/search"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// ReasonPlannerStopped is the convergence reason of a search whose planner
// function returned None.
const ReasonPlannerStopped = "planner_stopped"

// planner is a search's planner written in Starlark: a function of the
// history that returns the next point (a dict) or None to stop. Each call
// runs on a thread of its own under the script's step limit, with the
// script's print, no load(), and the command's cancellation; the script's
// values are frozen, so the function is a pure function of the history.
type planner struct {
	search   string
	fn       starlark.Callable
	space    search.Space
	keys     []string // the statistics every probe carries, "metric.stat"
	maxSteps uint64
	out      *output // the script's print() and secrets
	ctx      context.Context
	state    *declared // the script's, closed: a planner declares nothing
	guard    *guard    // the script's memory bound
}

var _ search.HistoryPlanner = (*planner)(nil)

// Next is NextFrom without the trials' statistics (Search calls NextFrom).
func (p *planner) Next(obs []search.Observation) search.Decision {
	h := search.History{Probes: make([]search.Probe, len(obs))}
	for i, o := range obs {
		h.Probes[i].Point = o.Point
	}
	d, err := p.NextFrom(h, obs)
	if err != nil {
		return search.Decision{Stop: true, Reason: "planner_error", Why: err.Error()}
	}
	return d
}

// NextFrom calls the function with the history and reads its answer; its
// errors show no secret of the script's profiles.
func (p *planner) NextFrom(h search.History, obs []search.Observation) (search.Decision, error) {
	d, err := p.nextFrom(h, obs)
	return d, p.out.redactError(err)
}

func (p *planner) nextFrom(h search.History, obs []search.Observation) (search.Decision, error) {
	thread := &starlark.Thread{
		Name:  "search " + p.search + " planner",
		Print: func(_ *starlark.Thread, msg string) { p.out.print(msg) },
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("a planner cannot load(): load modules at the top of the script")
		},
	}
	thread.SetLocal(stateKey, p.state)
	thread.SetLocal(guardKey, p.guard)
	thread.SetLocal(outputKey, p.out)
	over := false
	thread.OnMaxSteps = func(t *starlark.Thread) {
		over = true
		t.Cancel("step limit")
	}
	thread.SetMaxExecutionSteps(p.maxSteps)
	stop := context.AfterFunc(p.ctx, func() { thread.Cancel(context.Cause(p.ctx).Error()) })
	defer stop()
	v, err := starlark.Call(thread, p.fn, starlark.Tuple{p.history(h, obs)}, nil)
	if err != nil {
		if cerr := p.ctx.Err(); cerr != nil {
			return search.Decision{}, fmt.Errorf("search %q: planner %s: %w", p.search, p.fn.Name(), cerr)
		}
		limit := ""
		if over {
			limit = fmt.Sprintf("search %q: planner %s exceeded the step limit of %d steps", p.search, p.fn.Name(), p.maxSteps)
		}
		err = scriptError(err, limit)
		var se *Error
		if errors.As(err, &se) && !over {
			se.Msg = fmt.Sprintf("search %q: planner %s: %s", p.search, p.fn.Name(), se.Msg)
		}
		return search.Decision{}, err
	}
	why := fmt.Sprintf("%s(history of %d)", p.fn.Name(), len(obs))
	if v == starlark.None {
		return search.Decision{Stop: true, Reason: ReasonPlannerStopped, Why: why + " returned None"}, nil
	}
	pt, err := pointOf(p.space, v)
	if err == nil {
		err = p.space.Check(pt)
	}
	if err != nil {
		return search.Decision{}, &Error{Pos: p.position().String(),
			Msg: fmt.Sprintf("search %q: planner %s returned %s: %v; return a point of the space as a dict, or None to stop", p.search, p.fn.Name(), shown(v), err)}
	}
	return search.Decision{Point: pt, Why: why}, nil
}

// position is where the function is defined.
func (p *planner) position() syntax.Position {
	if f, ok := p.fn.(*starlark.Function); ok {
		return f.Position()
	}
	return syntax.Position{}
}

// history is the list the function receives: a struct per probe, oldest
// first, with index, point (a dict of the searched options), verdict
// ("pass", "fail" or "ambiguous"), confidence, objective (None when
// unmeasured), trials, failed_trials, stats (each "metric.stat" the search
// reads → its mean over the probe's successful trials, None when none
// measured it) and values (the same keys → the list of per-trial values).
func (p *planner) history(h search.History, obs []search.Observation) *starlark.List {
	out := make([]starlark.Value, len(obs))
	for i, o := range obs {
		point := starlark.NewDict(len(p.space))
		for j, prm := range p.space {
			_ = point.SetKey(starlark.String(prm.Name), number(o.Point[j], prm.Kind == search.KindInt))
		}
		stats, values := starlark.NewDict(len(p.keys)), starlark.NewDict(len(p.keys))
		failed := 0
		for _, k := range p.keys {
			var xs []starlark.Value
			sum := 0.0
			for _, t := range h.Probes[i].Trials {
				if x, ok := t.Values[k]; ok && t.OK {
					xs, sum = append(xs, starlark.Float(x)), sum+x
				}
			}
			mean := starlark.Value(starlark.None)
			if len(xs) > 0 {
				mean = starlark.Float(sum / float64(len(xs)))
			}
			_ = stats.SetKey(starlark.String(k), mean)
			_ = values.SetKey(starlark.String(k), starlark.NewList(xs))
		}
		for _, t := range h.Probes[i].Trials {
			if !t.OK {
				failed++
			}
		}
		s := starlarkstruct.FromStringDict(starlark.String("probe"), starlark.StringDict{
			"index": starlark.MakeInt(o.Index), "point": point, "verdict": starlark.String(o.Verdict.Outcome),
			"confidence": number(o.Verdict.Confidence, false), "objective": number(o.Objective, false),
			"trials": starlark.MakeInt(o.Trials), "failed_trials": starlark.MakeInt(failed),
			"stats": stats, "values": values,
		})
		s.Freeze()
		out[i] = s
	}
	l := starlark.NewList(out)
	l.Freeze()
	return l
}

// number is x as a Starlark int or float, None when it is not finite.
func number(x float64, whole bool) starlark.Value {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return starlark.None
	case whole:
		return starlark.MakeInt64(int64(x))
	}
	return starlark.Float(x)
}
