package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDealSpreadsEveryNameOnce(t *testing.T) {
	names := []string{"TestA", "TestB", "TestC", "TestD", "TestE"}
	assert.Equal(t, [][]string{{"TestA", "TestD"}, {"TestB", "TestE"}, {"TestC"}}, deal(names, 3, nil))
	assert.Equal(t, [][]string{{"TestA"}, {"TestB"}}, deal(names[:2], 4, nil), "no empty shard")
}

// TestDealLongestFirst: with weights, the longest tests are spread first
// and each goes where the least work is; an unknown test weighs the median.
func TestDealLongestFirst(t *testing.T) {
	weights := map[string]float64{"TestA": 9, "TestB": 5, "TestC": 4, "TestD": 1}
	shards := deal([]string{"TestA", "TestB", "TestC", "TestD", "TestNew"}, 2, weights)
	assert.Equal(t, [][]string{{"TestA", "TestC"}, {"TestB", "TestNew", "TestD"}}, shards) // 9+4 and 5+5+1
}

func TestDurationsRoundTrip(t *testing.T) {
	in := `{"Action":"run","Test":"TestA"}
{"Action":"pass","Test":"TestA/sub","Elapsed":3}
{"Action":"pass","Test":"TestA","Elapsed":4.5}
{"Action":"pass","Test":"TestP/one","Elapsed":6}
{"Action":"pass","Test":"TestP/two","Elapsed":5}
{"Action":"pass","Test":"TestP/two/deeper","Elapsed":5}
{"Action":"pass","Test":"TestP/docs/a.md","Elapsed":2}
{"Action":"pass","Test":"TestP","Elapsed":0.01}
{"Action":"fail","Test":"TestB","Elapsed":7}
{"Action":"pass","Elapsed":12}
not json
`
	var out bytes.Buffer
	require.NoError(t, writeDurations(strings.NewReader(in), &out))
	path := filepath.Join(t.TempDir(), "w.tsv")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	w, err := readWeights(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"TestA": 4.5, "TestB": 7, "TestP": 13}, w, "parallel subtests: their sum")
	assert.Regexp(t, "(?s)^# .*\nTestP\t13.00\nTestB\t7.00\nTestA\t4.50\n$", out.String())

	require.NoError(t, os.WriteFile(path, []byte("TestA 3\n"), 0o644))
	_, err = readWeights(path)
	assert.ErrorContains(t, err, "w.tsv:1: want name<TAB>seconds")
}

func TestBuildFlagsKeepOnlyWhatChangesTheBinary(t *testing.T) {
	assert.Equal(t, []string{"-race", "-tags=x"},
		buildFlags([]string{"-race", "-count=1", "-timeout", "30m", "-tags=x", "-run", "X"}))
}

// TestShardedRunRunsEveryTestAndFails builds a throwaway module with a light
// package and a heavy one of three tests, one failing: every test runs once
// (each writes a marker file) and the exit status is go test's failure.
func TestShardedRunRunsEveryTestAndFails(t *testing.T) {
	dir := t.TempDir()
	marks := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("light/light_test.go", "package light\nimport \"testing\"\nfunc TestLight(t *testing.T) {}\n")
	heavy := "package heavy\nimport (\"os\"; \"testing\")\n" +
		"func mark(t *testing.T) { os.WriteFile(os.Getenv(\"MARKS\")+\"/\"+t.Name(), nil, 0o644) }\n" +
		"func TestOne(t *testing.T) { mark(t) }\n" +
		"func TestTwo(t *testing.T) { mark(t); t.Fatal(\"two fails\") }\n" +
		"func TestThree(t *testing.T) { mark(t) }\n"
	write("heavy/heavy_test.go", heavy)
	t.Chdir(dir)
	t.Setenv("MARKS", marks)

	var out bytes.Buffer
	code := run(context.Background(), "example.com/m/heavy", 2, nil, []string{"-count=1"}, &out)
	assert.Equal(t, 1, code, out.String())
	assert.Contains(t, out.String(), "two fails")
	assert.Contains(t, out.String(), "ok  \texample.com/m/light")
	entries, err := os.ReadDir(marks)
	require.NoError(t, err)
	var ran []string
	for _, e := range entries {
		ran = append(ran, e.Name())
	}
	assert.ElementsMatch(t, []string{"TestOne", "TestTwo", "TestThree"}, ran)
	assert.Equal(t, 2, strings.Count(out.String(), "example.com/m/heavy"), "two shards each report: %s", out.String())
}
