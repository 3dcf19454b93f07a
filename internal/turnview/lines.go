package turnview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// eachLine opens path and calls fn at the start of each line that holds a
// record (blank lines are skipped, as AIPerf skips them), with the
// scanner there and the line's number; fn reads the record or skips the
// line. fn returning false stops the reading. A path that is not a regular
// file is refused unread (inputfile.Open: a FIFO's open never waits).
func eachLine(ctx context.Context, path string, fn func(s *scanner) (bool, error)) error {
	f, err := inputfile.Open(path)
	if err != nil {
		return fmt.Errorf("read raw export: %w", err)
	}
	defer f.Close()
	s := newScanner(ctx, f, path)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		more, err := s.begin()
		if err != nil || !more {
			return err
		}
		if more, err = fn(s); err != nil || !more {
			return err
		}
	}
}

// begin moves to the next line that is not blank: false at the end of
// the file.
func (s *scanner) begin() (bool, error) {
	for {
		c, err := s.r.ReadByte()
		switch {
		case errors.Is(err, io.EOF):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("%s:%d: %w", s.name, s.line, err)
		case c == '\n':
			s.line++
		case c == ' ' || c == '\t' || c == '\r':
		default:
			_ = s.r.UnreadByte()
			return true, nil
		}
	}
}

// end reads the rest of a record's line: nothing but whitespace may
// follow the object.
func (s *scanner) end() error {
	for {
		c, err := s.r.ReadByte()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("%s:%d: %w", s.name, s.line, err)
		case c == '\n':
			s.line++
			return nil
		case c == ' ' || c == '\t' || c == '\r':
		default:
			return s.errorf("%s after the line's JSON object (one JSON object a line)", show(c))
		}
	}
}

// skipLine skips the rest of the line unread.
func (s *scanner) skipLine() error {
	for {
		_, err := s.r.ReadSlice('\n')
		switch {
		case err == nil:
			s.line++
			return nil
		case errors.Is(err, io.EOF):
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return fmt.Errorf("%s:%d: %w", s.name, s.line, err)
		}
	}
}
