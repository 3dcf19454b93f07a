package plot

import (
	"context"
	"errors"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// Selection is what to draw, with compare's references: sweeps (names or
// ids; several are overlaid) or runs (run ids, --name labels,
// SWEEP/CELL-LABEL), not both.
type Selection struct {
	Sweeps []string
	Refs   []string
}

// Validate checks the selection before the store is read.
func (s Selection) Validate() error {
	switch {
	case len(s.Sweeps) > 0 && len(s.Refs) > 0:
		return errors.New("give runs or --sweep, not both")
	case len(s.Sweeps) == 0 && len(s.Refs) == 0:
		return errors.New("nothing to draw: give run ids or names, or --sweep NAME (see aiperf runs list)")
	}
	return nil
}

// CellLimit bounds the cells (of each sweep) that get their own figures:
// their CDFs and timelines. Every cell is on the sweep-level views.
const CellLimit = 60

// Data is a selection loaded from the store: the sweeps or groups with
// their statistics, and the runs behind the per-cell figures with their
// records.
type Data struct {
	Confidence float64
	Sweeps     []*store.SweepRuns
	Groups     []*store.Group
	// Runs holds every loaded run by id: with records for the runs drawn
	// per cell (their CDFs and timelines), without for the others.
	Runs map[int64]*result.Run
}

// Options are the statistics the views read, at a confidence level.
func Options(confidence float64) compare.Options {
	return compare.Options{Keys: Keys(), ConfidenceLevel: confidence}
}

// Load reads a selection from the store: every run's summary, and the
// records of the runs that get per-cell figures (the first CellLimit cells
// of each sweep, every run of the compared groups).
func Load(ctx context.Context, db *store.DB, sel Selection, confidence float64) (*Data, error) {
	if err := sel.Validate(); err != nil {
		return nil, err
	}
	d := &Data{Confidence: confidence, Runs: map[int64]*result.Run{}}
	keys := Options(confidence).StatKeys()
	for _, ref := range sel.Sweeps {
		s, err := db.SweepRuns(ctx, ref, keys)
		if err != nil {
			return nil, err
		}
		d.Sweeps = append(d.Sweeps, s)
		for i, c := range s.Cells {
			for _, r := range c.Runs {
				if err := d.load(ctx, db, r.ID, i < CellLimit); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, ref := range sel.Refs {
		g, err := db.RunsByRef(ctx, ref, keys)
		if err != nil {
			return nil, err
		}
		d.Groups = append(d.Groups, g)
		for _, r := range g.Runs {
			if err := d.load(ctx, db, r.ID, true); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

func (d *Data) load(ctx context.Context, db *store.DB, id int64, records bool) error {
	if _, ok := d.Runs[id]; ok {
		return nil
	}
	r, err := db.GetRun(ctx, id, records)
	if err != nil {
		return fmt.Errorf("load run %d: %w", id, err)
	}
	d.Runs[id] = r
	return nil
}

// SweepNames labels the sweeps, adding ids where names repeat.
func (d *Data) SweepNames() []string {
	count := map[string]int{}
	for _, s := range d.Sweeps {
		count[s.Sweep.Name]++
	}
	out := make([]string, len(d.Sweeps))
	for i, s := range d.Sweeps {
		out[i] = s.Sweep.Name
		if count[s.Sweep.Name] > 1 {
			out[i] = fmt.Sprintf("%s#%d", s.Sweep.Name, s.Sweep.ID)
		}
	}
	return out
}

// Reports are the sweeps' compare reports (the views' statistics), in
// order.
func (d *Data) Reports() []*compare.SweepReport {
	out := make([]*compare.SweepReport, len(d.Sweeps))
	for i, s := range d.Sweeps {
		out[i] = compare.Sweep(s, Options(d.Confidence))
	}
	return out
}

// completeRuns are the loaded runs among rows that completed, in order.
func (d *Data) completeRuns(rows []store.RunRow) []*result.Run {
	var out []*result.Run
	for _, row := range rows {
		if r := d.Runs[row.ID]; r != nil && row.Status == result.StatusComplete {
			out = append(out, r)
		}
	}
	return out
}
