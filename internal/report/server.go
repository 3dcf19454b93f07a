package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
)

// defaultServerFormats are the server-metrics exports written when
// --server-metrics-formats is not given (AIPerf's default).
var defaultServerFormats = []string{"json", "csv"}

// meta is what the server-metrics exports need of the run.
func meta(run *result.Run) servermetrics.Meta {
	return servermetrics.Meta{ToolVersion: run.ToolVersion, BenchmarkID: run.BenchmarkID, Start: run.StartTime,
		InputConfig: run.Config}
}

// hasSource reports whether the run scraped series of source.
func hasSource(run *result.Run, source string) bool {
	return run.Server != nil && slices.ContainsFunc(run.Server.Series, func(s servermetrics.Series) bool { return s.Source == source })
}

// serverExports writes the server-metrics exports into dir (AIPerf's files,
// as --server-metrics-formats asks) and, whenever GPU telemetry was
// collected, its time series (gpu_telemetry_export.jsonl, as AIPerf writes
// it unless --no-gpu-telemetry), and returns their paths. The time series need the collecting process's
// samples: a run read back from the store has none, and gets none.
func serverExports(dir string, run *result.Run, names Names) ([]string, error) {
	if run.Server == nil {
		return nil, nil
	}
	formats := run.Config.ServerMetricsFormats
	if len(formats) == 0 {
		formats = defaultServerFormats
	}
	m := meta(run)
	var exports []struct {
		name  string
		write func(io.Writer) error
	}
	add := func(name string, write func(io.Writer) error) {
		exports = append(exports, struct {
			name  string
			write func(io.Writer) error
		}{name, write})
	}
	if hasSource(run, servermetrics.SourceServer) || len(run.Server.Endpoints) > 0 {
		if slices.Contains(formats, "json") {
			add(names.ServerJSON, func(w io.Writer) error { return servermetrics.WriteJSON(w, run.Server, "", m) })
		}
		if slices.Contains(formats, "csv") {
			add(names.ServerCSV, func(w io.Writer) error { return servermetrics.WriteCSV(w, run.Server, "", m) })
		}
		if slices.Contains(formats, "jsonl") {
			add(names.ServerJSONL, func(w io.Writer) error { return servermetrics.WriteJSONL(w, run.Server, m) })
		}
		if slices.Contains(formats, "parquet") {
			add(names.ServerParquet, func(w io.Writer) error { return servermetrics.WriteParquet(w, run.Server, m) })
		}
	}
	if hasSource(run, servermetrics.SourceGPU) {
		add(names.GPUJSONL, func(w io.Writer) error { return servermetrics.WriteGPUJSONL(w, run.Server, m) })
	}
	var paths []string
	for _, e := range exports {
		path := filepath.Join(dir, e.name)
		err := writeFile(path, e.write)
		if errors.Is(err, servermetrics.ErrNoSamples) {
			continue // a stored run: no time series to write
		}
		if err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// telemetryData is the GPU telemetry block of profile_export_aiperf.json
// (AIPerf's "telemetry_data"), nil when the run has none.
func telemetryData(run *result.Run) (json.RawMessage, error) {
	if !hasSource(run, servermetrics.SourceGPU) {
		return nil, nil
	}
	var b bytes.Buffer
	if err := servermetrics.WriteGPUJSON(&b, run.Server, "", meta(run)); err != nil {
		return nil, fmt.Errorf("gpu telemetry: %w", err)
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}

// server prints the Server and GPU sections: the server's own account of
// the profiling span beside the client's (running and waiting requests,
// KV-cache usage, prefix-cache hit rate, its TTFT and ITL, per GPU
// utilisation, memory, power), then the scrapes' warnings.
func (p *printer) server(run *result.Run) {
	if run.Server == nil {
		return
	}
	var rows []servermetrics.Row
	if unprofiled(run) == "" { // else no profiling phase was scraped: the rows would be of another window
		rows = servermetrics.Headline(run.Server)
	}
	var notes []string
	for _, section := range []string{servermetrics.SectionServer, servermetrics.SectionGPU} {
		var table [][]string
		for _, r := range rows {
			if r.Section != section {
				continue
			}
			where := r.Endpoint
			if r.GPU != "" {
				where += " gpu " + r.GPU
			}
			value := number(r.Value)
			if r.Impossible != "" {
				value += " (!)"
				notes = append(notes, fmt.Sprintf("Warning: %s %s %s is %s %s, which cannot be (%s): the server's exporter is wrong, "+
					"or the metric is not what its name says; (!) marks it above", where, r.Name, r.Stat, number(r.Value), r.Unit, r.Impossible))
			}
			table = append(table, []string{where, r.Name, r.Stat, value, r.Unit})
		}
		if len(table) > 0 {
			p.section(section + " (scraped during the profiling phases)")
			p.table([]string{"Endpoint", "Metric", "Stat", "Value", "Unit"}, table, "lllrl")
		}
	}
	for _, n := range notes {
		p.line("%s", n)
	}
	for _, w := range run.Server.Warnings {
		p.line("Warning: %s", w)
	}
	for _, e := range run.Audit.ServerResetEvidence {
		p.line("KV cache reset (server counters) %s", e)
	}
}
