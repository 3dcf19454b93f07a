package swimlane

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/aiperf-go/aiperf/internal/plot"
)

//go:embed viewer.html.tmpl
var viewerPage string

//go:embed viewer.css
var viewerCSS string

//go:embed viewer.js
var viewerJS string

var viewerTmpl = template.Must(template.New("viewer").Parse(viewerPage))

// The viewer's bounds: the requests it holds (the lanes of the drawn slots
// that started first), and the points of each concurrency curve.
const (
	MaxHTMLRequests = 150_000
	maxCurvePoints  = 8_000
)

// WriteHTML writes the interactive viewer: one HTML file, its style,
// script and data inline, that makes no request (a Content-Security-Policy
// forbids any). It shows the drawn slots' lanes (zoom with the wheel, pan
// by dragging, a request's details on hover) and the concurrency curves.
func (v *View) WriteHTML(w io.Writer) error {
	data, err := json.Marshal(v.payload(MaxHTMLRequests)) // escapes <, > and & for the script element
	if err != nil {
		return fmt.Errorf("write the swim lane viewer: %w", err)
	}
	// Executed into w, unbuffered here: the page is as large as its data
	// (tens of MB for a big run), which is not held twice.
	err = viewerTmpl.Execute(w, struct {
		Title string
		CSS   template.CSS
		JS    template.JS
		Data  template.JS
	}{plot.Label(v.Title()), template.CSS(viewerCSS), template.JS(viewerJS), template.JS(data)})
	if err != nil {
		return fmt.Errorf("write the swim lane viewer: %w", err)
	}
	return nil
}

// payload is the viewer's data: times in seconds from T0.
type payload struct {
	Title     string     `json:"title"`
	Colors    []string   `json:"colors"` // the lanes' colours
	Notes     []string   `json:"notes"`
	XMax      float64    `json:"xMax"`
	Rows      int        `json:"rows"`
	Slots     [][2]int   `json:"slots"` // each drawn slot's first row and rows
	SlotCount int        `json:"slotCount"`
	Lanes     []laneJSON `json:"lanes"`
	Sessions  []sessJSON `json:"sessions"`
	Req       reqJSON    `json:"req"`
	Errors    []string   `json:"errors"`
	Active    curveJSON  `json:"active"`
	Idle      curveJSON  `json:"idle"`
	Peak      int        `json:"peak"`
	Target    int        `json:"target"`
	Ramp      *float64   `json:"ramp"`
	RampDur   float64    `json:"rampDur"`
	Bench     *float64   `json:"bench"`
	BenchDur  float64    `json:"benchDur"`
}

type laneJSON struct {
	Slot  int     `json:"slot"`
	First float64 `json:"first"`
	Last  float64 `json:"last"`
	Color int     `json:"color"`
}

type sessJSON struct {
	ID   string `json:"id"`
	Conv string `json:"conv"`
	Lane int    `json:"lane"`
	Row0 int    `json:"row0"` // among all rows
	Rows int    `json:"rows"`
	Sub  bool   `json:"sub,omitempty"`
}

// reqJSON are the requests, a column per field: start and end seconds,
// row, session, turn, flags (1 failed, 2 warmup), TTFT and latency ms (-1
// absent), ISL and OSL (-1 absent), error index (-1 none).
type reqJSON struct {
	S, E      []float64
	Row, Sess []int
	Turn      []int32
	Flag      []int
	TTFT, Lat []float64
	ISL, OSL  []int32
	Err       []int32
}

type curveJSON struct {
	T []float64 `json:"t"`
	V []int32   `json:"v"`
}

// round4 rounds to four decimals (0.1 ms as seconds).
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// payload is the view's data for the viewer: the lanes of the drawn slots,
// in time order, while they hold at most limit requests; a first lane that
// alone holds more is cut at limit (its sessions by start, each by turn).
func (v *View) payload(limit int) payload {
	p := payload{Title: plot.Label(v.Title()), XMax: round4(v.xMax()), Rows: v.Rows, SlotCount: len(v.Layout.Slots),
		Peak: v.PeakActive, Target: v.Target, Ramp: v.RampS, RampDur: v.rampDur, Bench: v.BenchEndS, BenchDur: v.benchDur,
		Active: v.curveJSON(v.Active), Idle: v.curveJSON(v.Idle)}
	for _, c := range laneColors {
		p.Colors = append(p.Colors, fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B))
	}
	for _, n := range v.Notes {
		p.Notes = append(p.Notes, plot.Label(n))
	}
	for _, e := range v.Run.Errors {
		p.Errors = append(p.Errors, plot.Label(e))
	}
	for s := range v.Slots {
		sl := v.Layout.Slots[s]
		p.Slots = append(p.Slots, [2]int{sl.Offset, min(sl.Rows, v.Rows-sl.Offset)})
	}
	held := 0
	for ln, lane := range v.Layout.Lanes {
		if lane.Slot >= v.Slots {
			continue
		}
		n := 0
		for _, m := range lane.Members {
			n += len(m.Depths)
		}
		if held+n > limit {
			if held == 0 { // the first lane, cut
				held = p.addLane(v, ln, limit)
			}
			p.Notes = append(p.Notes, fmt.Sprintf("the viewer holds the %d requests of the first %d sessions to start, at most %d "+
				"(the image draws every session of its slots)", held, len(p.Sessions), limit))
			break
		}
		held += p.addLane(v, ln, limit-held)
	}
	return p
}

// addLane adds a lane, its sessions and their requests, at most room of
// them (the sessions by start, each session's requests by turn); it
// returns the requests it took.
func (p *payload) addLane(v *View, ln, room int) int {
	lane := v.Layout.Lanes[ln]
	off := v.Layout.Slots[lane.Slot].Offset
	li := len(p.Lanes)
	p.Lanes = append(p.Lanes, laneJSON{Slot: lane.Slot, First: round4(v.sec(lane.First)), Last: round4(v.sec(lane.Last)),
		Color: ln % len(laneColors)})
	taken := 0
	for _, m := range lane.Members {
		if taken >= room {
			break
		}
		ss := v.Run.Sessions[m.Session]
		si := len(p.Sessions)
		p.Sessions = append(p.Sessions, sessJSON{ID: plot.Label(ss.ID), Conv: plot.Label(ss.Conversation), Lane: li,
			Row0: off + m.Row0, Rows: m.Rows, Sub: ss.Sub})
		for k, q := range v.Run.SessionRequests(int(m.Session)) {
			if taken >= room {
				break
			}
			taken++
			row := off + m.Row0 + int(m.Depths[k])
			if row >= v.Rows {
				continue
			}
			p.addRequest(v, v.Run.Requests[q], row, si)
		}
	}
	return taken
}

// addRequest adds a request, drawn in row, of session si.
func (p *payload) addRequest(v *View, r Request, row, si int) {
	flag := 0
	if r.Failed() {
		flag |= 1
	}
	if r.Warmup {
		flag |= 2
	}
	c := &p.Req
	c.S, c.E = append(c.S, round4(v.sec(r.Start))), append(c.E, round4(v.sec(r.End)))
	c.Row, c.Sess, c.Turn, c.Flag = append(c.Row, row), append(c.Sess, si), append(c.Turn, r.Turn), append(c.Flag, flag)
	c.TTFT, c.Lat = append(c.TTFT, msJSON(r.TTFTms)), append(c.Lat, msJSON(r.LatencyMs))
	c.ISL, c.OSL, c.Err = append(c.ISL, r.ISL), append(c.OSL, r.OSL), append(c.Err, r.Err)
}

// msJSON is a time in ms to 0.1, -1 when absent.
func msJSON(x float32) float64 {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return -1
	}
	return math.Round(float64(x)*10) / 10
}

// curveJSON is a step function for the viewer: every step when there are
// few, else per time bin its largest then its smallest value (the bins
// narrower than the viewer's pixels until zoomed far in).
func (v *View) curveJSON(steps []Step) curveJSON {
	var c curveJSON
	if len(steps) <= maxCurvePoints {
		for _, s := range steps {
			c.T, c.V = append(c.T, round4(v.sec(s.T))), append(c.V, s.V)
		}
		return c
	}
	bins := maxCurvePoints / 2
	width := v.xMax() / float64(bins)
	var prev int32
	i := 0
	for b := range bins {
		x0 := float64(b) * width
		lo, hi := prev, prev
		for ; i < len(steps) && v.sec(steps[i].T) < x0+width; i++ {
			prev = steps[i].V
			lo, hi = min(lo, prev), max(hi, prev)
		}
		c.T, c.V = append(c.T, round4(x0), round4(x0+width/2)), append(c.V, hi, lo)
	}
	return c
}
