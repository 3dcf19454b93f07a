package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func laneCell(label string, urls ...string) Cell {
	p := NewProfile()
	p.URL = urls
	return Cell{ID: "id-" + label, Label: label, Profile: p}
}

func TestServersNormalised(t *testing.T) {
	p := NewProfile()
	p.URL = []string{"HTTP://Mock.Example:80/v1", "mock.example", "https://b:8443", "https://B:8443/x"}
	assert.Equal(t, []string{"http://mock.example:80", "https://b:8443"}, p.Servers())
	p.URL = []string{"http://127.0.0.1:9000", "http://LOCALHOST:9000/v1", "http://[::1]:9000", "http://127.0.0.2:9000", "https://localhost"}
	assert.Equal(t, []string{"http://localhost:9000", "https://localhost:443"}, p.Servers(), "loopback names are one server")
}

func TestLanesSplitByServer(t *testing.T) {
	sw := Sweep{Name: "s", Trials: 2, Cells: []Cell{
		laneCell("a1", "http://a:1"),
		laneCell("b", "http://b:2/v1"),
		laneCell("a2", "http://A:1/other"), // a1's server, spelled otherwise
		laneCell("c", "http://c:3"),
		laneCell("bc", "http://b:2", "http://d:4"), // loads b's server too
	}}
	lanes := sw.Lanes()
	if !assert.Len(t, lanes, 3) {
		return
	}
	assert.Equal(t, []string{"a1", "a2"}, lanes[0].Cells)
	assert.Equal(t, []string{"http://a:1"}, lanes[0].Servers)
	assert.Equal(t, []string{"b", "bc"}, lanes[1].Cells)
	assert.Equal(t, []string{"http://b:2", "http://d:4"}, lanes[1].Servers)
	assert.Equal(t, []string{"c"}, lanes[2].Cells)

	var order []string
	for _, tr := range lanes[0].Trials {
		order = append(order, tr.Key())
	}
	assert.Equal(t, []string{"id-a1/0001", "id-a1/0002", "id-a2/0001", "id-a2/0002"}, order, "plan order within a lane")
	total := 0
	for _, l := range lanes {
		total += len(l.Trials)
	}
	assert.Equal(t, len(sw.TrialList()), total, "every trial in one lane")
}

func TestLanesJoinedThroughAThirdCell(t *testing.T) {
	sw := Sweep{Name: "s", Cells: []Cell{
		laneCell("x", "http://x:1"), laneCell("y", "http://y:1"), laneCell("xy", "http://y:1", "http://x:1"),
	}}
	lanes := sw.Lanes()
	assert.Len(t, lanes, 1, "x and y share a server through xy: never at once")
	assert.Equal(t, []string{"x", "y", "xy"}, lanes[0].Cells)
}
