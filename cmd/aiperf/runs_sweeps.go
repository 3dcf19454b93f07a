package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/store"
)

// RunsSweepsCmd is `aiperf runs sweeps`: the stored sweeps and searches.
type RunsSweepsCmd struct {
	Limit  int    `name:"limit" default:"50" help:"Show at most this many (0: all)."`
	Format string `name:"format" enum:"table,json" default:"table" help:"Output: table or json."`
}

// Run lists the sweeps and searches, newest first: a search with its
// probes (cells) and its answer.
func (c *RunsSweepsCmd) Run(ctx context.Context, g *Globals) error {
	db, err := openStoreToRead(ctx, g.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	sweeps, err := db.ListSweeps(ctx, c.Limit)
	if err != nil {
		return err
	}
	if c.Format == "json" {
		if sweeps == nil {
			sweeps = []store.SweepRow{}
		}
		return encodeIndented(g.Stdout, sweeps)
	}
	if len(sweeps) == 0 {
		fmt.Fprintf(g.Stdout, "no sweeps in %s\n", g.Store)
		return nil
	}
	rows := make([][]string, 0, len(sweeps))
	for _, s := range sweeps {
		status := s.Status
		if s.Abandoned {
			status = "abandoned (its process is gone: --resume goes on)"
		}
		rows = append(rows, []string{strconv.FormatInt(s.ID, 10), s.StartedAt.Local().Format("2006-01-02 15:04:05"), s.Name,
			s.Kind, status, strconv.Itoa(s.Cells), strconv.Itoa(s.Runs), orDash(s.Answer)})
	}
	report.Table(g.Stdout, []string{"id", "started", "name", "kind", "status", "cells/probes", "runs", "answer"}, rows, "rllllrrl")
	return nil
}
