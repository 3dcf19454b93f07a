package dataset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/media"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// uuidFile writes a single_turn file of the rows given, beside a.png and
// b.png, and opens it with --uuid-and-strip as strip says.
func uuidFile(t *testing.T, strip bool, kind string, rows ...string) (Dataset, error) {
	t.Helper()
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"), 4, 4)
	writePNG(t, filepath.Join(dir, "b.png"), 8, 4)
	in := filepath.Join(dir, "in.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(strings.Join(rows, "\n")), 0o600))
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	return Open(context.Background(), tok, Options{InputFile: in, CustomType: kind, UUIDAndStrip: strip})
}

// sent lists a turn's images as "uuid=bytes" (bytes: the image's, or
// "ref" for a cache reference).
func sent(items []media.Item) []string {
	var out []string
	for _, it := range items {
		what := "ref"
		if it.URL != "" {
			what = "bytes"
		}
		out = append(out, it.UUID+"="+what)
	}
	return out
}

// TestImageUUIDsStrip: under --uuid-and-strip, a session's later rows send
// an image whose uuid an earlier row sent with bytes as a reference only;
// the first occurrence and repeats within one row keep their bytes; each
// session starts afresh; authored references pass through. Without the
// option every image keeps its bytes and its uuid.
func TestImageUUIDsStrip(t *testing.T) {
	rows := []string{
		`{"session_id": "s1", "text": "one", "images": ["a.png", "a.png"], "image_uuids": ["ua", "ua"]}`,
		`{"session_id": "s1", "text": "two", "images": ["a.png", "b.png"], "image_uuids": ["ua", "ub"]}`,
		`{"session_id": "s2", "text": "three", "images": ["a.png"], "image_uuids": ["ua"]}`,
		`{"session_id": "s1", "text": "four", "image_uuids": ["ub", "uz"]}`,
		`{"session_id": "s1", "text": "five", "images": ["b.png"], "image_uuids": ["ub"]}`,
	}
	d, err := uuidFile(t, true, "", rows...)
	require.NoError(t, err)
	assert.True(t, HasImageUUIDs(d))
	require.Equal(t, 2, d.Len())
	s1, err := d.Conversation(0)
	require.NoError(t, err)
	var got [][]string
	for _, turn := range s1.Turns {
		got = append(got, sent(turn.Media))
	}
	assert.Equal(t, [][]string{{"ua=bytes", "ua=bytes"}, {"ua=ref", "ub=bytes"}, {"ub=ref", "uz=ref"}, {"ub=ref"}}, got)
	s2, err := d.Conversation(1)
	require.NoError(t, err)
	assert.Equal(t, []string{"ua=bytes"}, sent(s2.Turns[0].Media), "another session sends its first occurrence with bytes")

	d, err = uuidFile(t, false, "", rows...)
	require.NoError(t, err)
	s1, err = d.Conversation(0)
	require.NoError(t, err)
	assert.Equal(t, []string{"ua=bytes", "ub=bytes"}, sent(s1.Turns[1].Media), "without the option nothing is stripped")
	assert.Equal(t, []string{"ub=ref", "uz=ref"}, sent(s1.Turns[2].Media), "authored references pass through")
}

// TestImageUUIDsProblems: image_uuids are checked as AIPerf's SingleTurn
// checks them, and --uuid-and-strip is refused where there is nothing it
// can strip.
func TestImageUUIDsProblems(t *testing.T) {
	_, err := uuidFile(t, false, TypeSingleTurn,
		`{"text": "a", "images": ["a.png"], "image_uuids": ["u1", "u2"]}`,
		`{"text": "b", "images": ["a.png"], "image_uuids": [""]}`,
		`{"text": "c", "images": [{"name": "x", "contents": ["a.png"]}], "image_uuids": ["u1"]}`,
		`{"text": "d", "image_uuids": "u1"}`,
		`{"image_uuids": ["u1"]}`,
		`{"text": "ok", "images": ["a.png"], "image_uuids": ["u1"]}`)
	require.Error(t, err)
	for _, want := range []string{
		"in.jsonl:1: image_uuids: image_uuids length (2) must match images length (1)",
		"in.jsonl:2: image_uuids[0]: image_uuids must not contain empty strings",
		`in.jsonl:3: image_uuids: image_uuids go with images given as a list of strings`,
		"in.jsonl:4: image_uuids: expected a list of strings",
		"in.jsonl:5: at least one modality must be provided",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "in.jsonl:6")

	_, err = uuidFile(t, true, TypeMultiTurn, `{"turns": [{"text": "a"}]}`)
	assert.ErrorContains(t, err, "--uuid-and-strip is not supported with --custom-dataset-type multi_turn")
	_, err = uuidFile(t, true, TypeRandomPool, `{"text": "a"}`)
	assert.ErrorContains(t, err, "a random_pool file has none")
	_, err = uuidFile(t, false, TypeRandomPool, `{"text": "a", "images": ["a.png"], "image_uuids": ["u"]}`)
	assert.ErrorContains(t, err, "a single_turn record in a random_pool file", "image_uuids make a record single_turn")
	tok, err := tokenizer.Load("o200k_base")
	require.NoError(t, err)
	_, err = Open(context.Background(), tok, Options{ISLMean: 10, UUIDAndStrip: true})
	assert.ErrorContains(t, err, "give --input-file")
}
