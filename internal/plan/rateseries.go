package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// RatePoint is one point of a request-rate series (AIPerf's
// --request-rate-series file: {"points": [{"time_s", "qps"}, ...]}): the
// target rate at time_s seconds from the phase start. Between points the
// rate is linear; after the last it holds.
type RatePoint struct {
	TimeS float64 `json:"time_s"`
	QPS   float64 `json:"qps"`
}

// maxRatePoints bounds a series file: its points are held and searched.
const maxRatePoints = 1 << 16

// maxRateSeriesBytes bounds the file read.
const maxRateSeriesBytes = 8 << 20

// ReadRateSeries reads the points of a --request-rate-series file and
// checks them: at least one, the first at time 0, times increasing, rates
// finite, at least 0 and at most MaxRate, the last above 0.
func ReadRateSeries(path string) ([]RatePoint, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	defer f.Close()
	var doc struct {
		Points []RatePoint `json:"points"`
	}
	dec := json.NewDecoder(io.LimitReader(f, maxRateSeriesBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: want {\"points\": [{\"time_s\": 0, \"qps\": 5}, ...]}: %w", path, err)
	}
	if err := CheckRateSeries(doc.Points); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Points, nil
}

// CheckRateSeries checks a series' points (see ReadRateSeries).
func CheckRateSeries(pts []RatePoint) error {
	switch {
	case len(pts) == 0:
		return fmt.Errorf("has no points: give at least {\"time_s\": 0, \"qps\": RATE}")
	case len(pts) > maxRatePoints:
		return fmt.Errorf("has %d points, more than %d", len(pts), maxRatePoints)
	case pts[0].TimeS != 0:
		return fmt.Errorf("points[0].time_s must be 0 (the phase start), got %g", pts[0].TimeS)
	}
	for i, pt := range pts {
		switch {
		case math.IsNaN(pt.TimeS) || math.IsInf(pt.TimeS, 0) || pt.TimeS > MaxSeconds:
			return fmt.Errorf("points[%d].time_s must be finite seconds up to %g, got %g", i, float64(MaxSeconds), pt.TimeS)
		case i > 0 && pt.TimeS <= pts[i-1].TimeS:
			return fmt.Errorf("points[%d].time_s %g must be after points[%d].time_s %g", i, pt.TimeS, i-1, pts[i-1].TimeS)
		case math.IsNaN(pt.QPS) || pt.QPS < 0 || pt.QPS > MaxRate:
			return fmt.Errorf("points[%d].qps must be a rate in [0, %g], got %g", i, float64(MaxRate), pt.QPS)
		}
	}
	if last := pts[len(pts)-1]; last.QPS == 0 {
		return fmt.Errorf("the last point's qps must be above 0 (the rate holds after it), got 0")
	}
	return nil
}

// MeanRate is the series' mean rate over its span (the last point's rate
// for one point): the rate its phase reports as its target.
func MeanRate(pts []RatePoint) float64 {
	if len(pts) < 2 {
		return pts[0].QPS
	}
	area := 0.0
	for i := 1; i < len(pts); i++ {
		area += (pts[i].QPS + pts[i-1].QPS) / 2 * (pts[i].TimeS - pts[i-1].TimeS)
	}
	return area / pts[len(pts)-1].TimeS
}
