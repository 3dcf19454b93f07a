package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/internal/htmlreport"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
)

// ReportCmd is `aiperf report`: one self-contained HTML file of stored
// sweeps or runs.
type ReportCmd struct {
	Refs            []string `arg:"" optional:"" name:"ref" help:"Runs to report on, as for compare: a run id, a --name label (its trials), a sweep with a single cell, or SWEEP/CELL-LABEL; the first is the baseline."`
	Sweep           []string `name:"sweep" sep:"none" placeholder:"NAME|ID" help:"Sweep to report on (repeatable: later sweeps are compared cell by cell with the first). A name means its latest sweep."`
	Output          string   `name:"output" short:"o" default:"report.html" placeholder:"FILE" help:"The HTML file to write."`
	ConfidenceLevel float64  `name:"confidence-level" default:"0.95" help:"Confidence level of the intervals and verdicts, in (0, 1)."`
}

// Validate checks the arguments before the store is read.
func (c *ReportCmd) Validate() error {
	if err := (plot.Selection{Sweeps: c.Sweep, Refs: c.Refs}).Validate(); err != nil {
		return err
	}
	return plan.CheckConfidence("confidence_level", c.ConfidenceLevel)
}

// Run loads the selection and writes the report.
func (c *ReportCmd) Run(ctx context.Context, g *Globals) error {
	if err := checkOutputFile(c.Output, "--output"); err != nil { // before the store is read
		return usageErr(err)
	}
	const reading = "reading the runs to report on (nothing was written)"
	db, err := openStoreToRead(ctx, g.Store)
	if err != nil {
		return interruptedWhile(ctx, reading, err)
	}
	defer db.Close()
	d, err := plot.Load(ctx, db, plot.Selection{Sweeps: c.Sweep, Refs: c.Refs}, c.ConfidenceLevel)
	if err != nil {
		return interruptedWhile(ctx, reading, refErr(err))
	}
	searches, err := storedSearches(ctx, db, c.Sweep)
	if err != nil {
		return interruptedWhile(ctx, reading, err)
	}
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, d, htmlreport.Options{Store: g.Store, Version: version, Generated: time.Now(), Searches: searches}); err != nil {
		return err
	}
	if err := writeOutput(c.Output, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "wrote %s (%.1f kB): open it in a browser, it needs no network\n", c.Output, float64(buf.Len())/1000)
	return nil
}
