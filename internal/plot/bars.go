package plot

import (
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/compare"
)

// Bars is one statistic per cell (or group): a bar per series and
// category, with its confidence whisker.
type Bars struct {
	Name       string      `json:"name"` // file stem
	Title      string      `json:"title"`
	Y          Axis        `json:"y"`
	Categories []string    `json:"categories"`
	Series     []BarSeries `json:"series"`
}

// BarSeries is one sweep's values, one per category; a NaN mean is a cell
// the sweep does not have.
type BarSeries struct {
	Name   string     `json:"name"`
	Values []Interval `json:"values"`
}

// barKeys are the statistics drawn as bars: the headline ones of compare.
var barKeys = compare.DefaultKeys

// bars builds a bar view per statistic some table has; categories are the
// labels in order of first appearance. Past CellLimit categories there are
// none: a thousand bars read as noise, and the sweep table has the values.
func bars(tables []table) []Bars {
	var cats []string
	for _, t := range tables {
		for _, l := range t.labels {
			if !slices.Contains(cats, l) {
				cats = append(cats, l)
			}
		}
	}
	if len(cats) > CellLimit {
		return nil
	}
	var out []Bars
	for _, k := range barKeys {
		if !anyHas(tables, k) || allZero(tables, k) {
			continue // error counts of a clean sweep: nothing to see
		}
		y := axisOf(k, tables)
		b := Bars{Name: "bars_" + k.Metric + "_" + k.Stat, Title: y.Label, Y: y, Categories: cats}
		for _, t := range tables {
			s := BarSeries{Name: t.name, Values: make([]Interval, len(cats))}
			for i := range s.Values {
				s.Values[i] = Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
			}
			for i, l := range t.labels {
				if e := t.values[k.String()][i]; e.N > 0 {
					s.Values[slices.Index(cats, l)] = intervalOf(e)
				}
			}
			b.Series = append(b.Series, s)
		}
		out = append(out, b)
	}
	return out
}

func allZero(tables []table, k compare.Key) bool {
	for _, t := range tables {
		for _, e := range t.values[k.String()] {
			if e.N > 0 && e.Mean != 0 {
				return false
			}
		}
	}
	return true
}
