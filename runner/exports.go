package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
)

// ExportFrameLimit is how many characters of FILE frames (gzipped, base64)
// a remote trial writes to its log: a kubelet rotates a container's log at
// 10 MiB by default (containerLogMaxSize), and the parent reads only the
// current file. An export that would take it past the limit stays in the
// pod, and the manifest says so.
const ExportFrameLimit = 8 << 20

// exportEntry is one file of a trial's EXPORTS manifest.
type exportEntry struct {
	Name    string `json:"name"` // relative to the trial's directory, slash-separated
	Bytes   int64  `json:"bytes"`
	Skipped string `json:"skipped,omitempty"` // why it was not framed
}

// WriteExports frames every regular file under dir (a remote trial's
// artifact directory: its exports, inputs.json, server metrics) to w,
// smallest first, while they fit in limit characters of frames, then writes
// the manifest of them all, each frame in one write.
func WriteExports(w io.Writer, dir string, limit int) error {
	var entries []exportEntry
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		entries = append(entries, exportEntry{Name: filepath.ToSlash(rel), Bytes: info.Size()})
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list the exports in %s: %w", dir, err)
	}
	slices.SortStableFunc(entries, func(a, b exportEntry) int { return int(a.Bytes - b.Bytes) })
	left := limit
	for i, e := range entries {
		if e.Bytes > int64(left)*16 { // beyond what gzip makes of an export: not read at all
			entries[i].Skipped = fmt.Sprintf("%s, over the %s of frames the pod log carries (%s left)", mib(int(e.Bytes)), mib(limit), mib(left))
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Name)))
		if err != nil {
			return fmt.Errorf("read export %s: %w", e.Name, err)
		}
		f := encodeFrame(kindFile, b, "name="+url.QueryEscape(e.Name))
		if len(f) > left {
			entries[i].Skipped = fmt.Sprintf("%s framed, over the %s the pod log carries (%s left)",
				mib(len(f)), mib(limit), mib(left))
			continue
		}
		left -= len(f)
		if _, err := io.WriteString(w, f); err != nil {
			return fmt.Errorf("write export frame %s: %w", e.Name, err)
		}
	}
	js, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("encode the exports manifest: %w", err)
	}
	if _, err := io.WriteString(w, encodeFrame(kindExports, js, "")); err != nil {
		return fmt.Errorf("write the exports manifest: %w", err)
	}
	return nil
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// ReadExports writes the exports framed in log (see WriteExports) into dir,
// as a local trial leaves them, and returns a warning for each the pod kept
// (too large for the log). A frame that fails its checksum, or an export the
// manifest lists but the log lacks (cut), is an error, and no export is
// written: the trial's result must not be ingested without them. A log
// without a manifest (a child that died before writing it) brings back
// nothing and says nothing.
func ReadExports(log []byte, dir string) ([]string, error) {
	frames, _ := scanFrames(bytes.NewReader(log)) // a frame cut short is reported by ReadFrame
	var manifest *frame
	files := map[string]*frame{}
	for i := range frames {
		switch f := &frames[i]; f.kind {
		case kindExports:
			manifest = f
		case kindFile:
			name, err := url.QueryUnescape(f.header["name"])
			if err != nil || !filepath.IsLocal(filepath.FromSlash(name)) {
				return nil, fmt.Errorf("export frame names %q, not a file of the trial's directory", f.header["name"])
			}
			files[name] = f
		}
	}
	if manifest == nil {
		return nil, nil
	}
	js, err := manifest.decode()
	if err != nil {
		return nil, fmt.Errorf("the exports manifest: %w", err)
	}
	var entries []exportEntry
	if err := json.Unmarshal(js, &entries); err != nil {
		return nil, fmt.Errorf("decode the exports manifest: %w", err)
	}
	var warnings []string
	checked := map[string][]byte{} // every export checked before any is written
	for _, e := range entries {
		if e.Skipped != "" {
			warnings = append(warnings, fmt.Sprintf("export %s (%s) was not brought back from the pod: %s; "+
				"it is lost with the pod (--export-level summary leaves the per-request exports out)", e.Name, mib(int(e.Bytes)), e.Skipped))
			continue
		}
		f, ok := files[e.Name]
		if !ok {
			return warnings, fmt.Errorf("export %s is missing from the pod log, which was cut (rotated?)", e.Name)
		}
		b, err := f.decode()
		if err == nil && int64(len(b)) != e.Bytes {
			err = fmt.Errorf("%d bytes framed, the manifest says %d", len(b), e.Bytes)
		}
		if err != nil {
			return warnings, fmt.Errorf("export %s: %w", e.Name, err)
		}
		checked[e.Name] = b
	}
	for name, b := range checked {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return warnings, fmt.Errorf("write export %s: %w", name, err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return warnings, fmt.Errorf("write export %s: %w", name, err)
		}
	}
	return warnings, nil
}

// StripFrameData drops the data lines of every frame from log (which keeps
// their begin and end lines): what a trial's LogFile keeps of a remote
// child's output, its payloads being stored apart.
func StripFrameData(log []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(log) {
		if rest, ok := bytes.CutPrefix(line, []byte(framePrefix)); ok {
			if _, what, _ := bytes.Cut(rest, []byte("-")); bytes.HasPrefix(what, []byte("DATA ")) {
				continue
			}
		}
		out.Write(line)
	}
	return out.Bytes()
}
