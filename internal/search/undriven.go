package search

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Undriven is where a search stopped short of its space because its next
// probe's load could not be driven (the runner's convergence reason
// undriven_load: a concurrency above the requests a probe sends). Next is
// that probe's point, Why what cannot drive it (e.g. "--request-count 16
// cannot drive them"), and Driven the part of the space the search could
// drive, a box (Space.DrivenBox). The answer names the loads not driven,
// and the grid it is compared with covers Driven only: the search never
// claims a range it did not test.
type Undriven struct {
	Next   Point
	Why    string
	Driven Space
}

// UndrivenDoc is search_history.json's record of it (ours): the probe not
// run, why, and the space it could drive.
type UndrivenDoc struct {
	Next   map[string]any `json:"next"`
	Why    string         `json:"why"`
	Driven []SpaceDoc     `json:"driven_space"`
}

// StopUndriven records that the search stopped before a load it could not
// drive: Summarize and Document say so from then on.
func (s *Search) StopUndriven(u Undriven) {
	if len(u.Driven) != len(s.cfg.Space) {
		u.Driven = slices.Clone(s.cfg.Space)
	}
	s.undriven = &u
}

// DrivenBox is the part of sp whose loads can be driven, as a box around
// from (a point that can be): along each parameter, the others held at
// from's values, the widest range around from's value at which driven
// holds. Whether a load can be driven moves one way only along each
// parameter (a higher concurrency, a lower request count only ever make it
// undriven), so each end is found by bisection. The box is exact in one
// dimension, and in several when one parameter alone decides.
func (sp Space) DrivenBox(from Point, driven func(Point) bool) Space {
	box := slices.Clone(sp)
	for i := range sp {
		box[i].Lo = sp.reach(from, i, sp[i].Lo, driven)
		box[i].Hi = sp.reach(from, i, sp[i].Hi, driven)
	}
	return box
}

// reach is the value nearest to end, from from[i] towards it, at which
// driven holds with the other parameters at from's values.
func (sp Space) reach(from Point, i int, end float64, driven func(Point) bool) float64 {
	at := func(x float64) bool {
		q := slices.Clone(from)
		q[i] = x
		return driven(q)
	}
	if at(end) {
		return end
	}
	ok, bad := from[i], end
	for range 64 {
		mid := ok + (bad-ok)/2
		if sp[i].Kind == KindInt {
			mid = ok + math.Trunc((bad-ok)/2)
		}
		if mid == ok || mid == bad {
			break
		}
		if at(mid) {
			ok = mid
		} else {
			bad = mid
		}
	}
	return ok
}

// String is what the answer says of it, e.g. "concurrency above 16 not
// driven: --request-count 16 cannot drive them".
func (u *Undriven) String(space Space) string {
	var parts []string
	for i, p := range space {
		if d := u.Driven[i]; d.Hi < p.Hi {
			parts = append(parts, p.Name+" above "+fmtValue(d.Hi))
		}
		if d := u.Driven[i]; d.Lo > p.Lo {
			parts = append(parts, p.Name+" below "+fmtValue(d.Lo))
		}
	}
	if len(parts) == 0 { // the box does not show it: name the probe
		for i, p := range space {
			parts = append(parts, p.Name+" "+fmtValue(u.Next[i]))
		}
		return fmt.Sprintf("%s not driven: %s", strings.Join(parts, ", "), u.Why)
	}
	return fmt.Sprintf("%s not driven: %s", strings.Join(parts, " or "), u.Why)
}

// doc is its search_history.json record.
func (u *Undriven) doc(space Space) *UndrivenDoc {
	if u == nil {
		return nil
	}
	d := &UndrivenDoc{Next: space.keyed(u.Next), Why: u.Why}
	for _, p := range u.Driven {
		d.Driven = append(d.Driven, SpaceDoc{Path: p.Key(), Lo: p.Lo, Hi: p.Hi, Kind: p.Kind, Name: p.Name, Log: p.Log})
	}
	return d
}

// within tells whether pt lies in the box.
func (sp Space) within(pt Point) bool {
	for i, p := range sp {
		if pt[i] < p.Lo || pt[i] > p.Hi {
			return false
		}
	}
	return true
}
