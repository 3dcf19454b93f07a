package main

import (
	"bytes"
	"io"
	"sync"
)

// notices passes on, of the lines written to it, the warnings and notes
// ("warning: ...", "note: ...", each with its indented continuation lines)
// and drops the rest: the run's log under --ui none, which prints nothing
// while the run goes but what the user must not miss.
func notices(w io.Writer) io.Writer { return &noticeFilter{w: w} }

type noticeFilter struct {
	mu      sync.Mutex // a run logs from several goroutines
	w       io.Writer
	partial []byte // the unfinished line
	passing bool   // the last whole line was passed on
}

// Write keeps what follows the last newline until its line ends; a line
// longer than 64 KiB is judged by its start.
func (f *noticeFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(f.partial) < 64<<10 {
				f.partial = append(f.partial, p[:min(len(p), 64<<10-len(f.partial))]...)
			}
			return n, nil
		}
		line := append(f.partial, p[:i+1]...)
		f.partial = f.partial[:0]
		p = p[i+1:]
		if err := f.line(line); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (f *noticeFilter) line(line []byte) error {
	continued := len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
	f.passing = bytes.HasPrefix(line, []byte("warning: ")) || bytes.HasPrefix(line, []byte("note: ")) || continued && f.passing
	if !f.passing {
		return nil
	}
	_, err := f.w.Write(line)
	return err
}
