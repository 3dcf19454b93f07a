package starlark

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// sandbox decides what load() may read: .star files inside the directory
// tree of the top-level script or of a --lib-path directory, where they are
// after symlinks are resolved. A file that is not a .star script is never
// read, so no error message can show its content.
type sandbox struct {
	dirs   []string // the allowed trees as named: the script's directory first, then the lib paths
	real   []string // the same trees with their symlinks resolved
	realFS bool     // reading the real file system: resolve symlinks, read only regular files
}

// newSandbox allows the tree of script's directory and of every lib path.
// On the real file system every directory is made absolute and its
// symlinks resolved; an in-memory file system has no symlinks and is
// checked lexically.
func newSandbox(script string, libs []string, realFS bool) (*sandbox, error) {
	s := &sandbox{realFS: realFS}
	add := func(dir string) error {
		dir = filepath.Clean(dir)
		if !realFS {
			s.dirs, s.real = append(s.dirs, dir), append(s.real, dir)
			return nil
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(real); err != nil {
			return err
		} else if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		s.dirs, s.real = append(s.dirs, abs), append(s.real, real)
		return nil
	}
	if err := add(filepath.Dir(script)); err != nil {
		return nil, fmt.Errorf("load %s: %w", script, err)
	}
	for _, lib := range libs {
		if err := add(lib); err != nil {
			return nil, fmt.Errorf("lib path %s: %w", lib, err)
		}
	}
	return s, nil
}

// script checks the top-level script and returns the path to read.
func (s *sandbox) script(path string) (string, error) {
	if filepath.Ext(path) != ".star" {
		return "", fmt.Errorf("load %s: a sweep script is Starlark in a .star file", path)
	}
	if !s.realFS {
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("load %s: %w", path, err)
	}
	if err := regular(target); err != nil {
		return "", fmt.Errorf("load %s: %w", path, err)
	}
	return target, nil
}

// module checks load(name) from the file from (as named in positions) and
// returns the module's name for positions and the path to read. Its errors
// name the rule that refused the module.
func (s *sandbox) module(from, name string) (display, target string, err error) {
	display = name
	if !filepath.IsAbs(name) {
		display = filepath.Join(filepath.Dir(from), name)
	}
	display = filepath.Clean(display)
	if filepath.Ext(display) != ".star" {
		return "", "", fmt.Errorf("not a .star file: load() reads only Starlark modules")
	}
	abs := display
	if s.realFS {
		if abs, err = filepath.Abs(display); err != nil {
			return "", "", err
		}
	}
	if !within(abs, s.dirs) && !within(abs, s.real) {
		if filepath.IsAbs(name) {
			return "", "", fmt.Errorf("absolute path outside %s; %s", s.describe(s.dirs), libHint)
		}
		return "", "", fmt.Errorf("'..' leads to %s, outside %s; %s", display, s.describe(s.dirs), libHint)
	}
	if !s.realFS {
		return display, display, nil
	}
	target, err = filepath.EvalSymlinks(abs)
	if err != nil {
		var pe *fs.PathError // its path may lie behind a symlink out of the sandbox: name the module instead
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", "", fmt.Errorf("read %s: %w", display, err)
	}
	switch {
	case !within(target, s.real):
		return "", "", fmt.Errorf("%s is a symlink to %s, outside %s; %s", display, target, s.describe(s.real), libHint)
	case filepath.Ext(target) != ".star":
		return "", "", fmt.Errorf("%s is a symlink to %s, which is not a .star file: load() reads only Starlark modules", display, target)
	}
	if err := regular(target); err != nil {
		return "", "", fmt.Errorf("read %s: %w", display, err)
	}
	return display, target, nil
}

const libHint = "load() reads only inside the script's directory tree; name another directory with --lib-path DIR"

// describe names the allowed trees: "/a/b (the script's directory)" and
// any lib paths.
func (s *sandbox) describe(dirs []string) string {
	out := dirs[0] + " (the script's directory)"
	if len(dirs) > 1 {
		out += " and the --lib-path directories " + strings.Join(dirs[1:], ", ")
	}
	return out
}

// within reports whether path lies inside one of the directory trees.
func within(path string, dirs []string) bool {
	for _, d := range dirs {
		rel, err := filepath.Rel(d, path)
		if err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// MaxScriptBytes bounds a script or module file: it is read whole and
// parsed before the memory bound can see it.
const MaxScriptBytes = 16 << 20

// readScript reads a script or module file of at most MaxScriptBytes.
func readScript(path string) ([]byte, error) {
	b, err := inputfile.ReadFileMax(path, MaxScriptBytes)
	if tl := (*inputfile.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("%w, the most a script or module may be: "+
			"keep data out of scripts, or generate fewer declarations", err)
	}
	return b, err
}

// regular refuses what is not a regular file: reading a FIFO or a device
// could block or never end.
func regular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}
