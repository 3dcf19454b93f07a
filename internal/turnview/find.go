package turnview

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// RawFile is the raw export `aiperf profile --export-level raw` writes.
const RawFile = "profile_export_raw.jsonl"

// FileName is the viewer's name beside the records, as AIPerf's.
const FileName = "turn_messages.html"

// rawRecordsDir is AIPerf's folder of raw-record shards, read when a run
// directory has one.
const rawRecordsDir = "raw_records"

// ErrNoRawExport is Find's error for a run without a raw export.
var ErrNoRawExport = errors.New("no raw export")

// Find returns the raw-record files of a run, as AIPerf's viewer looks
// for them: path itself when it is a file; else, in the directory, the
// shards of raw_records/ (AIPerf's own runs), profile_export_raw.jsonl,
// or the *_raw.jsonl a --profile-export-prefix names. Out is where the
// viewer goes by default: FileName in the directory (beside the file).
func Find(path string) (files []string, out string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("run directory %s: %w", path, err)
	}
	if !st.IsDir() {
		return []string{path}, filepath.Join(filepath.Dir(path), FileName), nil
	}
	out = filepath.Join(path, FileName)
	if shards, _ := filepath.Glob(filepath.Join(path, rawRecordsDir, "*.jsonl")); len(shards) > 0 {
		slices.Sort(shards)
		return shards, out, nil
	}
	single := filepath.Join(path, RawFile)
	if st, err := os.Stat(single); err == nil && !st.IsDir() {
		return []string{single}, out, nil
	}
	if named, _ := filepath.Glob(filepath.Join(path, "*_raw.jsonl")); len(named) > 0 {
		slices.Sort(named)
		return named, out, nil
	}
	return nil, "", fmt.Errorf("%w in %s: it has no %s, the messages each request sent, "+
		"which only `aiperf profile --export-level raw` writes: profile the run again with it", ErrNoRawExport, path, RawFile)
}
