package turnview

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/aiperf-go/aiperf/internal/inputfile"
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
// Every file found must be a regular file: a FIFO, a device or a
// directory is refused by its mode, before it is opened (inputfile.Open
// refuses it too), for a FIFO's open would wait for a writer.
func Find(path string) (files []string, out string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("run directory %s: %w", path, err)
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, "", notRegular(path, st.Mode())
		}
		return []string{path}, filepath.Join(filepath.Dir(path), FileName), nil
	}
	out = filepath.Join(path, FileName)
	files, _ = filepath.Glob(filepath.Join(path, rawRecordsDir, "*.jsonl"))
	if single := filepath.Join(path, RawFile); len(files) == 0 {
		if _, err := os.Lstat(single); err == nil {
			files = []string{single}
		}
	}
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join(path, "*_raw.jsonl"))
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("%w in %s: it has no %s, the messages each request sent, "+
			"which only `aiperf profile --export-level raw` writes: profile the run again with it", ErrNoRawExport, path, RawFile)
	}
	slices.Sort(files)
	for _, f := range files {
		st, err := os.Stat(f)
		switch {
		case err != nil:
			return nil, "", fmt.Errorf("read raw export: %w", err)
		case !st.Mode().IsRegular():
			return nil, "", notRegular(f, st.Mode())
		}
	}
	return files, out, nil
}

// notRegular is the refusal of a raw export that is not a regular file,
// as inputfile.Open words it.
func notRegular(path string, mode fs.FileMode) error {
	return fmt.Errorf("read raw export: %w", &fs.PathError{Op: "open", Path: path, Err: inputfile.NotRegularError{Mode: mode}})
}
