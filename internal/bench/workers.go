package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/internal/shard"
)

// Workers start the worker processes of a sharded cell (--workers): the
// coordinator's side of package shard's channel, whatever carries it.
type Workers interface {
	N() int // how many share the cell
	// Start starts worker i (from 0); the peer's Wait must return once the
	// process ended.
	Start(ctx context.Context, i int) (*shard.Peer, error)
}

// workerSeed is worker i's arrival seed: its own Poisson and gamma
// streams, far from the phases' Seed+k of the others. The dataset keeps
// the run's seed, so every worker draws from the same sequence.
func workerSeed(seed int64, i int) int64 { return seed + int64(i)*1_000_003 }

// shareOut shares the phases out among the workers of a sharded cell,
// before anything is sent: one that would get nothing of a phase (or of a
// fixed schedule) is an input error.
func (c *cell) shareOut() error {
	if c.o.Workers == nil || c.o.Workers.N() <= 1 {
		return nil
	}
	n := c.o.Workers.N()
	shares, err := shard.Split(c.phases, n)
	if sched := c.ds.Schedule(); err == nil && sched != nil && len(sched) < n {
		err = fmt.Errorf("--workers %d is more than the %d entries of the fixed schedule: every worker needs one; "+
			"use at most %d workers", n, len(sched), len(sched))
	}
	if err != nil {
		return &InputError{fmt.Errorf("%w (nothing was sent)", err)}
	}
	c.shares = shares
	return nil
}

// runWorkers drives the phases from the worker processes: this process
// keeps the control hooks (the profiler brackets each profiling phase once
// across them), the scrapes and the exports; each worker's finished records
// come back while the load goes, onto this process's clock, and are
// finished here as if sent from here. A worker that cannot start fails the
// cell before anything is sent.
func (c *cell) runWorkers(ctx context.Context, col *servermetrics.Collector) (out phasesOutcome) {
	n, shares := c.o.Workers.N(), c.shares
	d := c.o.WorkerDeadlines
	if d.RequestTimeout == 0 {
		d.RequestTimeout = time.Duration(c.p.RequestTimeoutSeconds * float64(time.Second))
	}
	co := &shard.Coordinator{Clock: c.clock, OnRecord: c.fin.push, Deadlines: d, URLs: len(c.p.URL)}
	specs := make([]shard.Spec, n)
	for i := range n {
		p, err := c.o.Workers.Start(ctx, i)
		if err != nil {
			for _, p := range co.Peers {
				p.Kill()
				_ = p.Wait()
			}
			out.err = fmt.Errorf("start worker %d of %d (nothing was sent): %w", i, n, err)
			return out
		}
		co.Peers = append(co.Peers, p)
		specs[i] = shard.Spec{Worker: i, Workers: n, Profile: shard.WorkerProfile(c.p), Phases: shares[i],
			Seed: workerSeed(c.p.RandomSeed, i), Version: c.o.Version}
	}
	c.fin.merged = true
	prof := c.bracket(ctx, col)
	co.Hooks = prof.hooks()
	var verdict func()
	co.OnRecord, verdict = c.recordSink(co.Halt, co.Progress, &out)
	defer verdict()
	stopProgress := c.showProgress(co.Progress)
	so, err := co.Run(ctx, c.phases, specs)
	stopProgress()
	out.reports, out.err, out.workers = so.Reports, err, so.Workers
	for _, w := range so.Workers {
		if w.Done != nil {
			out.stallP99 = max(out.stallP99, time.Duration(w.Done.StallP99))
			out.stallMax = max(out.stallMax, time.Duration(w.Done.StallMax))
		}
	}
	c.endPhases(ctx, prof, nil, &out)
	return out
}

// judgeWorkers records each worker's own audit on the merged one: a worker
// that fell behind flags the cell, and the client health shown is the
// worst worker's.
func judgeWorkers(a *result.Audit, workers []shard.WorkerOutcome) {
	worst := math.Inf(-1)
	for _, w := range workers {
		rw := result.Worker{Name: w.Name, ClockOffsetNs: w.Clock.OffsetNs, ClockRTTNs: w.Clock.RTTNs, Records: w.Records,
			Error: w.Error}
		if d := w.Done; d != nil {
			rw.ClientBound, rw.AchievedRate, rw.Health, rw.Warnings = d.Audit.ClientBound, d.Audit.AchievedRate,
				d.Audit.Health, d.Audit.Warnings
			if h := d.Audit.Health; h != nil && h.SchedLatencyP99Ms > worst {
				worst, a.Health = h.SchedLatencyP99Ms, h
			}
			if d.Audit.ClientBound {
				a.ClientBound = true
				a.Warnings = append(a.Warnings, fmt.Sprintf("%s could not keep up: %s", w.Name, strings.Join(d.Audit.Warnings, "; ")))
			}
		}
		a.Workers = append(a.Workers, rw)
	}
}
