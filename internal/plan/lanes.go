package plan

import "slices"

// Lane is a sweep's trials that load one set of servers: they run one at a
// time, in plan order, with the sweep's cooldowns between them, while other
// lanes may run beside them (aiperf sweep --parallel).
type Lane struct {
	// Servers are the normalised origins its cells load (Profile.Servers).
	Servers []string `json:"servers"`
	// Cells are the labels of its cells, in plan order.
	Cells  []string `json:"cells"`
	Trials []Trial  `json:"-"`
}

// Lanes splits the sweep's trials (TrialList's order kept within each
// lane) so that no two lanes load a common server: cells whose --url
// origins share any server, directly or through another cell, are in one
// lane. Lanes are ordered by their first trial in the plan; a cell whose
// URLs name no server shares a lane with the other such cells.
func (s Sweep) Lanes() []Lane { return s.LanesBy(nil) }

// LanesBy is Lanes with servers that are one machine's port told by ids:
// two servers are one when the identities ids gives them meet (a server
// ids gives none is its own spelling; nil: every server is).
func (s Sweep) LanesBy(ids func(server string) []string) []Lane {
	// Union-find over the cells, joined through each server they load.
	parent := make([]int, len(s.Cells))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	index := map[string]int{} // cell id → position
	owner := map[string]int{} // server → a cell loading it
	for i, c := range s.Cells {
		index[c.ID] = i
		servers := c.Profile.Servers()
		if len(servers) == 0 {
			servers = []string{""}
		}
		for _, srv := range servers {
			keys := []string{srv}
			if ids != nil {
				if own := ids(srv); len(own) > 0 {
					keys = own
				}
			}
			for _, k := range keys {
				if j, ok := owner[k]; ok {
					parent[find(i)] = find(j)
				} else {
					owner[k] = i
				}
			}
		}
	}
	var lanes []Lane
	type member struct {
		lane int
		name string // a cell's label or a server
	}
	laneOf := map[int]int{}     // root cell → lane
	listed := map[member]bool{} // what each lane lists already: linear, not a scan per trial
	for _, t := range s.TrialList() {
		root := find(index[t.Cell.ID])
		l, ok := laneOf[root]
		if !ok {
			l = len(lanes)
			laneOf[root] = l
			lanes = append(lanes, Lane{})
		}
		lane := &lanes[l]
		if cell := (member{l, t.Cell.Label}); !listed[cell] {
			listed[cell] = true
			lane.Cells = append(lane.Cells, t.Cell.Label)
			for _, srv := range t.Cell.Profile.Servers() {
				if m := (member{l, "\x00" + srv}); !listed[m] {
					listed[m] = true
					lane.Servers = append(lane.Servers, srv)
				}
			}
		}
		lane.Trials = append(lane.Trials, t)
	}
	for i := range lanes {
		slices.Sort(lanes[i].Servers)
	}
	return lanes
}
