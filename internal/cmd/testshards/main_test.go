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
	assert.Equal(t, [][]string{{"TestA", "TestD"}, {"TestB", "TestE"}, {"TestC"}}, deal(names, 3))
	assert.Equal(t, [][]string{{"TestA"}, {"TestB"}}, deal(names[:2], 4), "no empty shard")
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
	code := run(context.Background(), "example.com/m/heavy", 2, []string{"-count=1"}, &out)
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
