package plot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Write encodes every figure in every format under dir (Name + "." +
// format, directories made as needed) and returns the paths written.
func Write(dir string, figs []Figure, formats []string, w, h int) ([]string, error) {
	var paths []string
	for _, f := range figs {
		for _, format := range formats {
			var buf bytes.Buffer
			if err := f.Encode(&buf, format, w, h); err != nil {
				return paths, err
			}
			path := filepath.Join(dir, filepath.FromSlash(f.Name)+"."+format)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return paths, fmt.Errorf("write figures: %w", err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return paths, fmt.Errorf("write figures: %w", err)
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}
