package main

import (
	"context"
	"errors"

	"github.com/aiperf-go/aiperf/internal/htmlreport"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/plot"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/store"
)

// storedSearches are the searches among the sweeps refs name, each with
// its search_history.json and its stored trials (a sweep that is not a
// search, or a search with nothing stored yet, is left out).
func storedSearches(ctx context.Context, db *store.DB, refs []string) ([]htmlreport.Search, error) {
	var out []htmlreport.Search
	for _, ref := range refs {
		doc, sw, err := db.SearchDoc(ctx, ref)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		h, err := db.SearchHistory(ctx, sw.ID, historyKeys(*doc))
		if err != nil {
			return nil, err
		}
		out = append(out, htmlreport.Search{Name: sw.Name, Doc: *doc, History: &h})
	}
	return out, nil
}

// historyKeys are the statistics a search reads, "metric.stat": its
// objective's, its filters' and its convergence criterion's.
func historyKeys(doc search.HistoryDoc) []string {
	var keys []string
	for _, o := range doc.Config.Objectives {
		keys = append(keys, o.Metric+"."+o.Stat)
	}
	for _, f := range doc.Config.SLAFilters {
		keys = append(keys, f.Key())
	}
	if c := doc.Config.Convergence; c != nil {
		keys = append(keys, c.Key())
	}
	return keys
}

// trajectoryFigures are the trajectory figures of the searches among the
// selected sweeps: search_trajectory, or search_trajectory_<name> each
// when there are several.
func trajectoryFigures(ctx context.Context, db *store.DB, sel plot.Selection) ([]plot.Figure, error) {
	searches, err := storedSearches(ctx, db, sel.Sweeps)
	if err != nil {
		return nil, err
	}
	var out []plot.Figure
	for _, s := range searches {
		name := "search_trajectory"
		if len(searches) > 1 {
			name += "_" + plan.DirName(s.Name)
		}
		tr, err := plot.TrajectoryOf(s.Doc, plot.TrajectoryOptions{Name: name, History: s.History})
		if err != nil {
			continue // a search with no probe measured yet has no figure
		}
		out = append(out, tr.Figure())
	}
	return out, nil
}
