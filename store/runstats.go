package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// loadStats fills Stats and Units of runs with the profiling-phase values of
// the requested "metric.stat" keys (and the "value" of the same metrics, so
// RunRow.Stat can answer avg for scalars), in one query, and Server with the
// series of the requested server and GPU metric families, in another.
func loadStats(ctx context.Context, q querier, runs []RunRow, keys []string) error {
	keys, families := splitServerKeys(keys)
	if err := loadServerSeries(ctx, q, runs, families); err != nil {
		return err
	}
	if len(runs) == 0 || len(keys) == 0 {
		return nil
	}
	index, idJSON := indexRuns(runs)
	for i := range runs {
		runs[i].Stats, runs[i].Units = map[string]float64{}, map[string]string{}
	}
	wanted := map[string]bool{}
	metricSet, statSet := map[string]bool{}, map[string]bool{statValue: true}
	for _, k := range keys {
		m, s, ok := strings.Cut(k, ".")
		if !ok {
			return fmt.Errorf("statistic key %q is not metric.stat", k)
		}
		wanted[k], wanted[m+"."+statValue] = true, true
		metricSet[m], statSet[s] = true, true
	}
	metricJSON, _ := json.Marshal(setKeys(metricSet))
	statJSON, _ := json.Marshal(setKeys(statSet))
	rows, err := q.QueryContext(ctx, `
		SELECT run_id, metric, stat, value, unit FROM run_stats
		WHERE run_id IN (SELECT value FROM json_each(?1)) AND phase = ?2
			AND metric IN (SELECT value FROM json_each(?3)) AND stat IN (SELECT value FROM json_each(?4))`,
		idJSON, phaseProfiling, string(metricJSON), string(statJSON))
	if err != nil {
		return fmt.Errorf("load statistics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id                 int64
			metric, stat, unit string
			v                  float64
		)
		if err := rows.Scan(&id, &metric, &stat, &v, &unit); err != nil {
			return fmt.Errorf("load statistics: %w", err)
		}
		if k := metric + "." + stat; wanted[k] && isFinite(v) { // a non-finite one: absent
			r := index[id]
			r.Stats[k], r.Units[metric] = v, unit
		}
	}
	return rows.Err()
}

// indexRuns maps run ids to runs, and lists the ids as a JSON array (for
// json_each).
func indexRuns(runs []RunRow) (map[int64]*RunRow, string) {
	index := make(map[int64]*RunRow, len(runs))
	ids := make([]int64, len(runs))
	for i := range runs {
		index[runs[i].ID], ids[i] = &runs[i], runs[i].ID
	}
	idJSON, _ := json.Marshal(ids) // numbers: cannot fail
	return index, string(idJSON)
}

func setKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
