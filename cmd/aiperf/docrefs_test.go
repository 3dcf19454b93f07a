package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsNameTestsThatExist: every test or fuzz target the README and the
// docs cite by name (`TestX`, `FuzzX`) is a function of a _test.go file in
// the repository, so a renamed test does not leave the docs pointing at
// nothing (response-checks.md cited TestZeroCompletionUsageBesideTextIsUntrusted,
// renamed TestTooFewCompletionTokensAreUntrusted).
func TestDocsNameTestsThatExist(t *testing.T) {
	root := filepath.Join("..", "..")
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Z]\w*)\(`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			funcs[m[1]] = true
		}
		return err
	})
	require.NoError(t, err)
	cited := regexp.MustCompile("`((?:Test|Fuzz)[A-Z]\\w*)`")
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range cited.FindAllStringSubmatch(string(b), -1) {
			assert.True(t, funcs[m[1]], "%s cites %s, which no _test.go file declares", page, m[1])
		}
	}
}

// TestDocsFuzzTimeDefault: where the docs give `make fuzz`'s default
// FUZZTIME, it is scripts/fuzz.sh's (development.md said 10s of a 1m default).
func TestDocsFuzzTimeDefault(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "fuzz.sh"))
	require.NoError(t, err)
	m := regexp.MustCompile(`\$\{FUZZTIME:-([^}]+)\}`).FindSubmatch(script)
	require.NotNil(t, m, "scripts/fuzz.sh sets no FUZZTIME default")
	given := regexp.MustCompile("FUZZTIME`?\\s+\\(default ([^)]+)\\)")
	found := 0
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, d := range given.FindAllSubmatch(b, -1) {
			found++
			assert.Equal(t, string(m[1]), string(d[1]), "%s gives FUZZTIME's default", page)
		}
	}
	assert.NotZero(t, found, "development.md gives the default")
}
