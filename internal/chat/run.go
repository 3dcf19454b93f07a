package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxMessage bounds one line of input: a longer one ends the session.
const MaxMessage = 1 << 20

// FailedTurns is Run's error when turns failed in an interactive session
// (each was reported as it failed; the session went on).
type FailedTurns struct{ N, Of int }

func (e *FailedTurns) Error() string {
	return fmt.Sprintf("%d of %d turns failed (each is reported above)", e.N, e.Of)
}

// Run holds the conversation: with quick, that one message, its failure
// an error; else a message per line of in until it ends (Ctrl-D), a
// failed turn reported on errOut and the session going on (FailedTurns
// at the end). Blank lines are skipped. An interrupt (ctx) ends it at
// once, mid-reply or at the prompt, with ctx's cause.
func Run(ctx context.Context, cfg Config, quick *string, in io.Reader, out, errOut io.Writer) error {
	s := New(cfg)
	defer s.Close()
	fmt.Fprintf(out, "Using model: %s\n", cfg.Model)
	if quick != nil {
		return turn(ctx, s, *quick, out)
	}
	fmt.Fprintln(out, "Please enter a message for the chat model (Ctrl-D to exit):")
	lines := readLines(ctx, in)
	failed, turns := 0, 0
	for {
		fmt.Fprint(out, "> ")
		var l line
		select {
		case <-ctx.Done():
			fmt.Fprintln(out)
			return context.Cause(ctx)
		case l = <-lines:
		}
		if l.err != nil {
			fmt.Fprintln(out)
			if errors.Is(l.err, io.EOF) {
				break
			}
			return l.err
		}
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		turns++
		if err := turn(ctx, s, l.text, out); err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			failed++
			fmt.Fprintf(errOut, "request failed: %v\n", err)
		}
	}
	if failed > 0 {
		return &FailedTurns{N: failed, Of: turns}
	}
	return nil
}

// turn sends one message and prints its figures.
func turn(ctx context.Context, s *Session, message string, out io.Writer) error {
	t, err := s.Send(ctx, message, out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, t.Stats())
	return err
}

// line is one line of input, or why there is none (io.EOF at the end).
type line struct {
	text string
	err  error
}

// readLines reads in a line at a time on a goroutine of its own, so that
// an interrupt is not held by a read (the goroutine is left blocked in it).
func readLines(ctx context.Context, in io.Reader) <-chan line {
	ch := make(chan line)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), MaxMessage)
		for sc.Scan() {
			select {
			case ch <- line{text: sc.Text()}:
			case <-ctx.Done():
				return
			}
		}
		err := sc.Err()
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			err = errors.New("read a message: a line of over 1 MiB (a message is at most that)")
		case err != nil:
			err = fmt.Errorf("read a message: %w", err)
		default:
			err = io.EOF
		}
		select {
		case ch <- line{err: err}:
		case <-ctx.Done():
		}
	}()
	return ch
}
