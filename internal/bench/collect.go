package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// collect starts scraping the server's metrics and GPU telemetry (the
// collect stage): a baseline scrape now, before the reset, then on the
// interval until the run's phases end. Nil when nothing is to be scraped.
func (c *cell) collect(ctx context.Context) (*servermetrics.Collector, error) {
	server, gpu := c.p.ScrapeTargets()
	var targets []servermetrics.Target
	for _, u := range server {
		targets = append(targets, servermetrics.Target{URL: u, Source: servermetrics.SourceServer})
	}
	for _, u := range gpu {
		targets = append(targets, servermetrics.Target{URL: u, Source: servermetrics.SourceGPU})
	}
	// AIPerf's default DCGM exporters, with or without --gpu-telemetry:
	// scraped when they serve DCGM metrics, silently left out otherwise.
	for _, u := range servermetrics.ServingDCGM(ctx, c.p.DefaultGPUTargets()) {
		targets = append(targets, servermetrics.Target{URL: u, Source: servermetrics.SourceGPU, Anonymous: true})
	}
	if len(targets) == 0 {
		return nil, nil
	}
	interval := plan.DefaultScrapeInterval
	if c.p.ServerMetricsInterval != nil {
		interval = *c.p.ServerMetricsInterval
	}
	var warmups []string
	for _, ph := range c.phases {
		if ph.Kind == plan.KindWarmup {
			warmups = append(warmups, ph.Name)
		}
	}
	var slice time.Duration
	if c.p.SliceDuration != nil {
		slice = time.Duration(*c.p.SliceDuration * float64(time.Second))
	}
	maxSeries := 0 // the default
	if c.p.ServerMetricsMaxSeries != nil {
		maxSeries = *c.p.ServerMetricsMaxSeries
	}
	col, err := servermetrics.Start(ctx, servermetrics.Options{
		Endpoints:     targets,
		MaxSeries:     maxSeries,
		SliceDuration: slice,
		Interval:      time.Duration(interval * float64(time.Second)),
		Headers:       controlHeaders(c.p),
		Origins:       c.p.URL, // the credentials go only to a target of the inference servers' origins
		Now:           c.clock.Now,
		Warmup:        warmups,
		Warn:          c.logWarning,
		Redact:        c.p.Redactor().Redact,
	})
	if err != nil {
		return nil, fmt.Errorf("start server metrics collection: %w", err)
	}
	return col, nil
}

// collected stops the collector and keeps its result on the run.
func (c *cell) collected(col *servermetrics.Collector) {
	if col != nil {
		res := col.Stop()
		c.run.Server = &res
	}
}
