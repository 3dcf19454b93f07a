package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/result"
)

// Export file names, as AIPerf writes them.
const (
	JSONFile  = "profile_export_aiperf.json"
	CSVFile   = "profile_export_aiperf.csv"
	JSONLFile = "profile_export.jsonl"

	TimeslicesJSONFile = "profile_export_aiperf_timeslices.json"
	TimeslicesCSVFile  = "profile_export_aiperf_timeslices.csv"
)

// WriteAll writes the JSON, CSV, (unless --export-level summary) JSONL and
// (with --slice-duration) timeslice exports of run into dir (created if needed), named as its
// --profile-export-prefix asks (NamesOf), then the server-metrics exports
// when the run scraped any, and returns their paths in that order. Each
// file appears under its final name only once complete.
func WriteAll(dir string, run *result.Run) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create artifact dir: %w", err)
	}
	names := NamesOf(run.Config)
	exports := []export{{names.JSON, WriteJSON}}
	if names.csv {
		exports = append(exports, export{names.CSV, WriteCSV})
	}
	if names.Records() {
		exports = append(exports, export{names.JSONL, WriteJSONL})
	}
	if names.raw {
		exports = append(exports, export{names.RawJSONL, WriteRawJSONL})
	}
	if run.Network != nil && len(run.Network.Samples) > 0 {
		exports = append(exports, export{names.NetworkJSONL, WriteNetworkJSONL})
	}
	if names.outputs {
		exports = append(exports, export{names.Outputs, WriteOutputsJSON})
	}
	if run.Timeslices != nil {
		exports = append(exports, export{names.TimeslicesJSON, WriteTimeslicesJSON},
			export{names.TimeslicesCSV, WriteTimeslicesCSV})
	}
	paths := make([]string, 0, len(exports))
	streamed := run.StreamedJSONL
	if streamed != "" {
		defer os.Remove(streamed) // a no-op once renamed into place
	}
	for _, e := range exports {
		path := filepath.Join(dir, e.name)
		if e.name == names.JSONL && streamed == path+".partial" {
			// Written while the run went: complete, it only needs its name.
			if err := os.Rename(streamed, path); err != nil {
				return paths, fmt.Errorf("write %s: %w", e.name, err)
			}
			paths = append(paths, path)
			continue
		}
		if err := writeFile(path, func(w io.Writer) error { return e.write(w, run) }); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	more, err := serverExports(dir, run, names)
	paths = append(paths, more...)
	if err != nil {
		return paths, err
	}
	more, err = writePhases(dir, run, names)
	return append(paths, more...), err
}

// export is one export file: its name and its writer.
type export struct {
	name  string
	write func(io.Writer, *result.Run) error
}

// writeFile writes path through a ".partial" sibling renamed into place, so a
// failed write never leaves a truncated export under the final name.
func writeFile(path string, write func(io.Writer) error) (err error) {
	tmp := path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Base(path), err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", filepath.Base(path), err)
	}
	return nil
}

// JSON writes v as indented JSON without HTML escaping: the shape of every
// JSON document aiperf prints or exports.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteJSONFile writes v to path as JSON (see JSON), creating its
// directory: the file appears under its name only once complete, so a
// reader never sees half of it and a rewrite replaces it whole.
func WriteJSONFile(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the directory of %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, func(w io.Writer) error { return JSON(w, v) })
}
