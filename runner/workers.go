package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/aiperf-go/aiperf/internal/shard"
)

// Workers starts the workers of a sharded cell (--workers) as local
// subprocesses, `<Binary> worker`, the control channel on their stdin and
// stdout (package shard). Each gets SIGINT should this process die, as a
// trial child does, and stops when its stdin closes.
type Workers struct {
	Binary string
	Count  int
	// Log takes each worker's stderr, every line led by its name (nil:
	// only the last line is kept, to explain a worker that died).
	Log io.Writer
}

// N is how many workers share the cell.
func (w Workers) N() int { return w.Count }

// Start starts worker i.
func (w Workers) Start(ctx context.Context, i int) (*shard.Peer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(w.Binary, "worker")
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	cmd.SysProcAttr = orphanSignal()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("worker %d: %w", i, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("worker %d: %w", i, err)
	}
	log := &lineLog{w: w.Log, prefix: fmt.Sprintf("worker %d: ", i)}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("worker %d: %w", i, err)
	}
	name := fmt.Sprintf("worker %d (pid %d)", i, cmd.Process.Pid)
	log.mu.Lock() // its stderr is copied from Start on
	log.prefix = name + ": "
	log.mu.Unlock()
	return &shard.Peer{
		Name: name,
		Conn: shard.NewConn(stdout, stdin),
		Wait: func() error {
			stdin.Close()
			err := cmd.Wait()
			if err != nil {
				if last := log.last(); last != "" {
					err = fmt.Errorf("%w (its last output: %q)", err, last)
				}
			}
			return err
		},
		Kill: func() { _ = cmd.Process.Kill() },
	}, nil
}

// lineLog forwards a worker's stderr line by line, each led by prefix,
// and keeps the last line.
type lineLog struct {
	w      io.Writer
	prefix string
	mu     sync.Mutex
	buf    []byte
	tail   string
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		if strings.TrimSpace(line) != "" {
			l.tail = line
		}
		if l.w != nil {
			fmt.Fprintf(l.w, "%s%s\n", l.prefix, line)
		}
	}
	return len(p), nil
}

func (l *lineLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := strings.TrimSpace(string(l.buf)); t != "" {
		return t
	}
	return strings.TrimSpace(l.tail)
}
