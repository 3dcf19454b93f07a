package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// MaxMessage bounds one line of input, a message: a longer one ends the
// session with ErrLongLine.
const MaxMessage = 1 << 20

// ErrLongLine is Run's error when a line of input is over MaxMessage: the
// input is bad (the turns before it were sent).
var ErrLongLine = fmt.Errorf("read a message: a line of input is over %d MiB, more than aiperf chat takes: "+
	"send a shorter message (aiperf profile --input-file sends longer prompts)", MaxMessage>>20)

// FailedTurns is Run's error when turns failed in an interactive session
// (each was reported as it failed; the session went on).
type FailedTurns struct{ N, Of int }

func (e *FailedTurns) Error() string {
	return fmt.Sprintf("%d of %d turns failed (each is reported above)", e.N, e.Of)
}

// OutputError is Run's error when its output could not be written for
// another reason than its reader going away (a full disk): the session
// stopped there.
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return fmt.Sprintf("print the reply: %v", e.Err) }
func (e *OutputError) Unwrap() error { return e.Err }

// Run holds the conversation: with quick, that one message, its failure
// an error; else a message per line of in until it ends (Ctrl-D), a
// failed turn reported on errOut and the session going on (FailedTurns
// at the end). Blank lines are skipped. An interrupt (ctx) ends it at
// once, mid-reply or at the prompt, with ctx's cause. An output that
// fails ends it too, after the turn it failed in: quietly when its reader
// went away (aiperf chat … | head), with the session's own error (nil, a
// failed --quick request, FailedTurns); else with an OutputError. A
// failed write is never a failed turn.
func Run(ctx context.Context, cfg Config, quick *string, in io.Reader, out, errOut io.Writer) error {
	s := New(cfg)
	defer s.Close()
	o := &output{w: out}
	fmt.Fprintf(o, "Using model: %s\n", cfg.Model)
	if quick != nil {
		if o.err != nil {
			return o.end(nil)
		}
		return o.end(turn(ctx, s, *quick, o))
	}
	fmt.Fprintln(o, "Please enter a message for the chat model (Ctrl-D to exit):")
	lines := readLines(ctx, in)
	failed, turns := 0, 0
	for {
		fmt.Fprint(o, "> ")
		if o.err != nil {
			break
		}
		var l line
		select {
		case <-ctx.Done():
			fmt.Fprintln(o)
			return context.Cause(ctx)
		case l = <-lines:
		}
		if l.err != nil {
			fmt.Fprintln(o)
			if errors.Is(l.err, io.EOF) {
				break
			}
			return l.err
		}
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		turns++
		if err := turn(ctx, s, l.text, o); err != nil {
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
	return o.end(nil)
}

// turn sends one message and prints its figures. Its error is the
// request's: the output's is the session's to see (output.err).
func turn(ctx context.Context, s *Session, message string, out io.Writer) error {
	t, err := s.Send(ctx, message, out)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, t.Stats())
	return nil
}

// output is Run's output: the first write that fails is kept, and every
// write after it fails at once the same way, printing nothing more.
type output struct {
	w   io.Writer
	err error
}

func (o *output) Write(b []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(b)
	if err != nil {
		o.err = err
	}
	return n, err
}

// end is the session's error err, unless the output failed for another
// reason than its reader going away (EPIPE: aiperf chat … | head).
func (o *output) end(err error) error {
	if err != nil || o.err == nil || errors.Is(o.err, syscall.EPIPE) {
		return err
	}
	return &OutputError{Err: o.err}
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
			err = ErrLongLine
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
