package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/runner"
)

const (
	// MaxPodLog is the most of a trial pod's log the parent reads: a
	// kubelet serves only its current log file (10 MiB by default,
	// containerLogMaxSize), and a trial's frames stop at 8 MiB of exports
	// plus its result. A longer log fails the trial.
	MaxPodLog = 64 << 20
	// keptLog is the most of the log kept as the trial's LogFile (its end,
	// from a line's start).
	keptLog = 16 << 20
	// defaultLogWait bounds the read of a finished pod's log.
	defaultLogWait = time.Minute
)

// readLog reads the log of the Job's pod (the latest, should there be
// more), within logWait and at most logMax bytes. On error it returns what
// is worth keeping of the log, if anything: what was read of a log that did
// not end in time, the end of one too long.
func (e *Executor) readLog(ctx context.Context, job string) ([]byte, error) {
	lctx, cancel := context.WithTimeout(ctx, e.logWait)
	defer cancel()
	log, err := e.readPodLog(lctx, job)
	switch {
	case err == nil:
		return log, nil
	case ctx.Err() != nil:
		return log, fmt.Errorf("cancelled while reading the pod's log: %w", ctx.Err())
	case errors.Is(lctx.Err(), context.DeadlineExceeded):
		return log, fmt.Errorf("%w (the log is read within %s of the job's end)", err, e.logWait)
	}
	return log, err
}

func (e *Executor) readPodLog(ctx context.Context, job string) ([]byte, error) {
	pods, err := e.pods(ctx, job)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, errors.New("the job ended without a pod to read the result from")
	}
	pod := latest(pods).Name
	rc, err := e.podLog(ctx, pod)
	if err != nil {
		return nil, fmt.Errorf("read the log of pod %s: %w", pod, err)
	}
	defer rc.Close()
	stop := context.AfterFunc(ctx, func() { _ = rc.Close() }) // a stream that ignores ctx
	defer stop()
	b, err := io.ReadAll(io.LimitReader(rc, int64(e.logMax)+1))
	if err != nil {
		if ctx.Err() != nil {
			return b, fmt.Errorf("the log of pod %s did not end (%s read): %w", pod, size(len(b)), ctx.Err())
		}
		return b, fmt.Errorf("read the log of pod %s: %w", pod, err)
	}
	if len(b) <= e.logMax {
		return b, nil
	}
	tail, err := logEnd(rc, b, e.logKeep)
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:] // from a line's start: no secret is cut in two before its redaction
	}
	return tail, &logTooLong{pod: pod, max: e.logMax, ended: err == nil}
}

// logTooLong is the error of a pod log over the most read: its end is
// kept.
type logTooLong struct {
	pod   string
	max   int
	ended bool // read to its end (else: it did not end in time)
}

func (e *logTooLong) Error() string {
	s := fmt.Sprintf("the log of pod %s exceeds %s, the most a trial's log may hold; its end is kept in %s", e.pod,
		size(e.max), runner.LogFile)
	if !e.ended {
		s += " (as far as it was read: it did not end)"
	}
	return s
}

// logEnd reads r to its end, keeping the last n bytes of head and what
// follows.
func logEnd(r io.Reader, head []byte, n int) ([]byte, error) {
	tail := make([]byte, 0, 2*n)
	tail = append(tail, head[max(0, len(head)-n):]...)
	buf := make([]byte, 64<<10)
	for {
		k, err := r.Read(buf)
		if len(tail)+k > cap(tail) {
			drop := len(tail) + k - n
			tail = tail[:copy(tail, tail[min(drop, len(tail)):])]
		}
		tail = append(tail, buf[:k]...)
		if err == io.EOF {
			return tail[max(0, len(tail)-n):], nil
		}
		if err != nil {
			return tail[max(0, len(tail)-n):], err
		}
	}
}

// keepLog writes log as the trial's LogFile at path: redacted, without the
// frames' payload lines, its last keep bytes only (from a line's start, so
// that no secret is cut in two before its redaction), after a note when
// readErr says it is the end of a longer log. A nil log writes nothing.
func keepLog(path string, log []byte, readErr error, keep int, redact *plan.Redactor) error {
	if log == nil {
		return nil
	}
	log = runner.StripFrameData(log)
	var note string
	if tl := (*logTooLong)(nil); errors.As(readErr, &tl) {
		note = fmt.Sprintf("[aiperf: the pod log exceeds %s: only its end is kept]\n", size(tl.max))
	}
	if len(log) > keep {
		cut := len(log) - keep
		if i := bytes.IndexByte(log[cut:], '\n'); i >= 0 {
			cut += i + 1
		}
		note = fmt.Sprintf("[aiperf: the first %s of the pod log are not kept]\n", size(cut))
		log = log[cut:]
	}
	if err := os.WriteFile(path, []byte(note+redact.Redact(string(log))), 0o644); err != nil {
		return fmt.Errorf("write trial log: %w", err)
	}
	return nil
}

// size says n bytes in MiB, or bytes below one.
func size(n int) string {
	switch {
	case n < 1<<20:
		return fmt.Sprintf("%d bytes", n)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
