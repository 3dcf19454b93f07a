package dataset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile writes lines to a file in a temporary directory.
func writeFile(t testing.TB, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return path
}

// trace is rows out of timestamp order, with one session and a tie.
var trace = []string{
	`{"timestamp": 700, "input_length": 5}`,
	`{"timestamp": 300, "input_length": 5, "session_id": "s"}`,
	`{"timestamp": 100, "input_length": 5}`,
	`{"timestamp": 500, "input_length": 5}`,
	`{"timestamp": 800, "input_length": 5, "session_id": "s"}`,
	`{"timestamp": 500, "input_length": 5}`,
	`{"delay": 50, "input_length": 5, "session_id": "s"}`,
	`{"timestamp": 900, "input_length": 5}`,
}

func TestSchedule(t *testing.T) {
	path := writeFile(t, "trace.jsonl", trace...)
	cases := []struct {
		name   string
		o      Options
		want   []Timed
		turns  int
		sTimes []float64 // session s's turn timestamps
	}{
		{"absolute", Options{FixedSchedule: true},
			[]Timed{{2, 100}, {1, 300}, {3, 500}, {4, 500}, {0, 700}, {5, 900}}, 8, []float64{300, 800}},
		{"auto-offset", Options{FixedSchedule: true, AutoOffset: true},
			[]Timed{{2, 0}, {1, 200}, {3, 400}, {4, 400}, {0, 600}, {5, 800}}, 8, []float64{200, 700}},
		{"window", Options{FixedSchedule: true, StartOffsetMs: ptr(300.0), EndOffsetMs: ptr(700.0)},
			[]Timed{{1, 0}, {2, 200}, {3, 200}, {0, 400}}, 5, []float64{0}},
		{"end only, auto-offset", Options{FixedSchedule: true, AutoOffset: true, EndOffsetMs: ptr(500.0)},
			[]Timed{{1, 0}, {0, 200}, {2, 400}, {3, 400}}, 5, []float64{200}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.o.InputFile = path
			d, convs := open(t, c.o)
			assert.Equal(t, c.want, d.Schedule())
			assert.Equal(t, c.turns, Turns(d), "rows outside the window are dropped; rows without a timestamp are kept")
			var s Conversation
			for _, conv := range convs {
				if conv.ID == "s" {
					s = conv
				}
			}
			var times []float64
			for _, turn := range s.Turns {
				if turn.HasTimestamp {
					times = append(times, turn.TimestampMs)
				}
			}
			assert.Equal(t, c.sTimes, times, "turn timestamps are shifted like the schedule")
			assert.Equal(t, 50.0, s.Turns[len(s.Turns)-1].DelayMs)
		})
	}
}

func TestScheduleNeedsEveryStart(t *testing.T) {
	path := writeFile(t, "partial.jsonl", `{"timestamp": 5, "input_length": 5}`, `{"input_length": 5}`, `{"input_length": 6}`)
	d, _ := open(t, Options{InputFile: path})
	assert.Nil(t, d.Schedule(), "not a schedule unless every conversation starts at a timestamp")
	_, err := Open(context.Background(), o200k(t), Options{InputFile: path, FixedSchedule: true})
	require.Error(t, err)
	les := lineErrors(err)
	require.Len(t, les, 2)
	assert.Equal(t, []int{2, 3}, []int{les[0].Line, les[1].Line})
}

func TestConversationsConcurrently(t *testing.T) {
	d, want := open(t, Options{InputFile: head200, OSLMean: 10, OSLStddev: 3})
	var wg sync.WaitGroup
	got := make([][]Conversation, 4)
	for w := range got {
		got[w] = make([]Conversation, d.Len())
		wg.Go(func() {
			for k := range d.Len() {
				i := (k*7 + w*13) % d.Len()
				c, err := d.Conversation(i)
				assert.NoError(t, err)
				got[w][i] = c
			}
		})
	}
	wg.Wait()
	for w := range got {
		assert.Equal(t, want, got[w], "worker %d reads the same conversations, in any order", w)
	}
	require.NoError(t, d.Close())
	_, err := d.Conversation(0)
	assert.ErrorContains(t, err, "dataset closed")
}

func TestFileDeterminism(t *testing.T) {
	o := Options{InputFile: head200, Seed: 9, OSLMean: 50, OSLStddev: 20}
	_, a := open(t, o)
	_, b := open(t, o)
	assert.Equal(t, a, b, "same seed, same prompts")
	o.Seed = 10
	_, c := open(t, o)
	assert.NotEqual(t, a[0].Turns[0].Text, c[0].Turns[0].Text, "another seed, other blocks")
	assert.Equal(t, a[0].Turns[0].MaxTokens, c[0].Turns[0].MaxTokens, "output_length is the row's")
}
