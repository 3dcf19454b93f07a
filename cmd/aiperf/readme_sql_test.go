package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestReadmeQueries runs the example queries of the run store's page
// (docs/store.md) with the sqlite3 driver against the store of two real
// runs: each must run and return rows, the server query a prefix-cache hit
// rate for every run.
func TestReadmeQueries(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "store.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	require.Len(t, blocks, 1, "the run store section's query block")
	var queries []string
	for q := range strings.SplitSeq(blocks[0][1], ";\n") {
		if q = strings.TrimSpace(q); q != "" {
			queries = append(queries, q)
		}
	}
	require.Len(t, queries, 3)

	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	for range 2 {
		inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--request-count", "10", "--reset-kv-cache")...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "aiperf.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	for i, q := range queries {
		q = strings.ReplaceAll(q, "run_id = 12", "run_id = 1") // the example's run
		rows, err := db.Query(q)
		require.NoError(t, err, "query %d:\n%s", i+1, q)
		cols, err := rows.Columns()
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for j := range vals {
				ptrs[j] = &vals[j]
			}
			require.NoError(t, rows.Scan(ptrs...))
			for j, v := range vals {
				if cols[j] == "error_type" {
					continue // NULL for a success
				}
				assert.NotNil(t, v, "query %d: column %s is NULL (a metric or statistic name that is not stored?)", i+1, cols[j])
			}
			n++
		}
		require.NoError(t, rows.Err())
		rows.Close()
		assert.Positive(t, n, "query %d returned no rows:\n%s", i+1, q)
	}
}
