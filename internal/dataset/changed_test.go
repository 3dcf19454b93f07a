package dataset

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openTrace opens the mooncake trace at path (interleaved sessions, so
// that rows are regrouped) and reads every conversation back once.
func openTrace(t *testing.T, path string) Dataset {
	t.Helper()
	d, err := Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeMooncakeTrace})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	for i := range d.Len() {
		_, err := d.Conversation(i)
		require.NoError(t, err, "the file as it was opened reads back")
	}
	return d
}

var changingTrace = []string{
	`{"session_id": "a", "input_length": 8, "output_length": 2}`,
	`{"session_id": "b", "input_length": 8, "output_length": 2}`,
	`{"session_id": "a", "input_length": 8, "output_length": 2, "delay": 5}`,
}

// A file edited in place after it was opened, even to the same size and
// with its modification time put back, is refused when read back, never
// read as what was not checked (nor, for inputs.json, as what was sent).
func TestReadBackRefusesAChangedFile(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, path string){
		"same size, new time": func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			nb := strings.Replace(string(b), `"delay": 5`, `"delay": 7`, 1)
			require.NotEqual(t, string(b), nb)
			require.NoError(t, os.WriteFile(path, []byte(nb), 0o644))
			later := time.Now().Add(time.Hour) // a different time even on a coarse clock
			require.NoError(t, os.Chtimes(path, later, later))
		},
		"same size, time kept": func(t *testing.T, path string) {
			st, err := os.Stat(path)
			require.NoError(t, err)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			nb := strings.Replace(string(b), `"output_length": 2, "delay"`, `"output_length": 7, "delay"`, 1)
			require.NoError(t, os.WriteFile(path, []byte(nb), 0o644))
			require.NoError(t, os.Chtimes(path, st.ModTime(), st.ModTime()))
		},
		"truncated": func(t *testing.T, path string) {
			require.NoError(t, os.Truncate(path, 0))
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeLines(t, changingTrace...)
			d := openTrace(t, path)
			change(t, path)
			_, err := d.Conversation(0) // session a: lines 1 and 3
			require.ErrorIs(t, err, ErrInputChanged)
			assert.ErrorContains(t, err, "re-read "+path+": the input file changed during the run: ")
			assert.NotContains(t, err.Error(), "EOF")
		})
	}
}

// An unchanged file reads back as often as asked, its rows regrouped by
// session and sampled (the checksums follow the rows).
func TestReadBackOfAnUnchangedFile(t *testing.T) {
	path := writeLines(t, changingTrace...)
	d := openTrace(t, path)
	c, err := d.Conversation(0)
	require.NoError(t, err)
	assert.Len(t, c.Turns, 2)

	d, err = Open(context.Background(), o200k(t), Options{InputFile: path, CustomType: TypeMooncakeTrace,
		Replay: Replay{SampleRatio: 0.5}, Seed: 3})
	require.NoError(t, err)
	defer d.Close()
	for i := range d.Len() {
		_, err := d.Conversation(i)
		require.NoError(t, err)
	}
}
