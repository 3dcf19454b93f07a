package plot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/outputfile"
)

// Write encodes every figure in every format under dir (Name + "." +
// format, directories made as needed) and returns the paths written. Each
// file is written whole (outputfile.Write); once ctx is done (a Ctrl-C) no
// other is begun, the one being drawn is dropped, and the error wraps
// ctx's cause: the files already written stay, each a whole figure.
func Write(ctx context.Context, dir string, figs []Figure, formats []string, w, h int) ([]string, error) {
	var paths []string
	for _, f := range figs {
		for _, format := range formats {
			if ctx.Err() != nil {
				return paths, context.Cause(ctx)
			}
			var buf bytes.Buffer
			if err := f.EncodeContext(ctx, &buf, format, w, h); err != nil {
				return paths, err
			}
			path := filepath.Join(dir, filepath.FromSlash(f.Name)+"."+format)
			if _, err := outputfile.Write(path, func(out io.Writer) error {
				_, err := buf.WriteTo(out)
				return err
			}); err != nil {
				return paths, fmt.Errorf("write figures: %w", err)
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}
