package swimlane

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sessions are packed into slots greedily by first start, a slot reused
// once its session has ended (at the same instant included), the lowest
// free slot first; a session's overlapping requests take rows of their
// own, its slot as tall as its tallest session.
func TestLayoutSlots(t *testing.T) {
	r := load(t, []string{
		rec("A", "c", 0, 0, 60, nil, ""),
		rec("A", "c", 1, 30, 100, nil, ""), // overlaps turn 0: a second row
		rec("B", "c", 0, 10, 50, nil, ""),
		rec("C", "c", 0, 60, 120, nil, ""),
		rec("D", "c", 0, 100, 130, nil, ""),
		rec("E", "c", 0, 55, 58, nil, ""),
	}, "")
	l := NewLayout(r)
	var order, slots []string
	for _, ln := range l.Lanes {
		order = append(order, ln.Root)
		slots = append(slots, fmt.Sprintf("%s:%d", ln.Root, ln.Slot))
	}
	assert.Equal(t, []string{"A", "B", "E", "C", "D"}, order)
	assert.Equal(t, []string{"A:0", "B:1", "E:1", "C:1", "D:0"}, slots)
	require.Len(t, l.Slots, 2)
	assert.Equal(t, Slot{Offset: 0, Rows: 2, Lanes: []int32{0, 4}}, l.Slots[0])
	assert.Equal(t, Slot{Offset: 2, Rows: 1, Lanes: []int32{1, 2, 3}}, l.Slots[1])
	assert.Equal(t, 3, l.Rows)
	assert.Equal(t, []int32{0, 1}, l.Lanes[0].Members[0].Depths)

	active := r.Active()
	for _, at := range []float64{0, 10, 30, 50, 55, 58, 60, 100, 120, 130} {
		want := map[float64]int32{0: 1, 10: 2, 30: 3, 50: 2, 55: 3, 58: 2, 60: 2, 100: 2, 120: 1, 130: 0}[at]
		assert.Equal(t, want, valueAt(active, ms(at)), "at %g ms", at)
	}
	assert.Equal(t, 3, Peak(active))
}

// Subagent sessions nest under their root's lane, packed into child rows
// below the root's (a row reused once its subagent has ended); subagents
// whose parent made no request share a phantom root's lane; a parent
// cycle detaches each session to its own lane.
func TestLayoutSubagents(t *testing.T) {
	sub := func(parent string) map[string]any {
		return map[string]any{"agent_depth": 1, "parent_correlation_id": parent}
	}
	r := load(t, []string{
		rec("R", "c", 0, 0, 50, nil, ""),
		rec("R", "c", 1, 50, 100, nil, ""),
		rec("K1", "c::sa", 0, 10, 40, sub("R"), ""),
		rec("K2", "c::sa", 0, 20, 50, sub("R"), ""),
		rec("K3", "c::sa", 0, 45, 60, sub("K1"), ""), // K1's own subagent: the same tree
		rec("O1", "o::sa", 0, 0, 10, sub("P-absent"), ""),
		rec("O2", "o::sa", 0, 5, 15, sub("P-absent"), ""),
		rec("X", "x", 0, 200, 210, map[string]any{"parent_correlation_id": "Y"}, ""),
		rec("Y", "y", 0, 200, 220, map[string]any{"parent_correlation_id": "X"}, ""),
	}, "")
	l := NewLayout(r)
	require.Len(t, l.Lanes, 4)
	phantom, root := l.Lanes[0], l.Lanes[1]
	assert.Equal(t, "P-absent", phantom.Root)
	assert.Equal(t, []string{"O1", "O2"}, sessionIDs(r, phantom))
	assert.Equal(t, []int{0, 1}, []int{phantom.Members[0].Row0, phantom.Members[1].Row0})
	assert.Equal(t, 2, phantom.Rows)
	assert.Equal(t, "R", root.Root)
	assert.Equal(t, []string{"R", "K1", "K2", "K3"}, sessionIDs(r, root))
	assert.Equal(t, []int{0, 1, 2, 1}, []int{root.Members[0].Row0, root.Members[1].Row0, root.Members[2].Row0, root.Members[3].Row0})
	assert.Equal(t, 3, root.Rows)
	assert.Equal(t, []string{"X"}, sessionIDs(r, l.Lanes[2]))
	assert.Equal(t, []string{"Y"}, sessionIDs(r, l.Lanes[3]))
	assert.Equal(t, "run1 — 3 sessions + 5 subagents across 2 slots", NewView(r, Options{}).Title())
}

// With root_correlation_id in the export, the lanes are the trees it
// names, whatever the parent ids say.
func TestLayoutRootIDs(t *testing.T) {
	r := load(t, []string{
		rec("R", "c", 0, 0, 100, map[string]any{"root_correlation_id": "R"}, ""),
		rec("K", "c::sa", 0, 10, 40, map[string]any{"agent_depth": 1, "parent_correlation_id": "elsewhere", "root_correlation_id": "R"}, ""),
		rec("S", "s", 0, 0, 10, nil, ""),
	}, "")
	l := NewLayout(r)
	require.Len(t, l.Lanes, 2)
	assert.Equal(t, []string{"S"}, sessionIDs(r, l.Lanes[0]), "the lane ending first of two starting together")
	assert.Equal(t, []string{"R", "K"}, sessionIDs(r, l.Lanes[1]))
}

// A run with more rows than MaxRows draws the slots that started first,
// says so, and still counts every request in its curves.
func TestViewCapsRows(t *testing.T) {
	var lines []string
	for i := range MaxRows + 50 {
		lines = append(lines, rec(fmt.Sprintf("s%03d", i), "c", 0, float64(i), 1000, nil, ""))
	}
	r := load(t, lines, "")
	v := NewView(r, Options{Target: 8})
	assert.Equal(t, MaxRows, v.Slots)
	assert.Equal(t, MaxRows, v.Rows)
	assert.Equal(t, MaxRows, v.Sessions)
	assert.Equal(t, MaxRows+50, v.PeakActive)
	assert.Contains(t, v.Notes[len(v.Notes)-1], fmt.Sprintf("drew the first %d of %d slots", MaxRows, MaxRows+50))
	assert.Contains(t, v.Notes[len(v.Notes)-1], fmt.Sprintf("the concurrency curves count all %d requests", MaxRows+50))
}
