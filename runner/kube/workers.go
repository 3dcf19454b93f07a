package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aiperf-go/aiperf/internal/shard"
	"github.com/aiperf-go/aiperf/runner"
)

// Labels of a sharded cell's worker Jobs (and their pods).
const (
	LabelShard  = "aiperf.dev/shard"  // the cell's workers: one random id for all of them
	LabelWorker = "aiperf.dev/worker" // the worker's number, from 0
)

const (
	// WorkerTokenEnv names the variable a worker pod reads the cell's token
	// from (through a secretKeyRef): it presents it when it joins.
	WorkerTokenEnv = "AIPERF_WORKER_TOKEN"
	workerTokenKey = "worker-token"
	// workerExitWait bounds how long a worker's Job may take to end once
	// its channel closed, before it is deleted.
	workerExitWait = 2 * time.Minute
)

// Workers runs the workers of a sharded cell (profile --workers N
// --executor kubernetes) as N Jobs whose pods run `aiperf worker
// --connect ADDR`: each dials this process back over TCP and joins with
// the cell's token (shard.Listen), then speaks the shard channel over the
// connection. The first Start creates every Job; each Start waits for its
// worker to join, for at most ScheduleTimeout from then.
type Workers struct {
	// APIKey goes to each pod through its Secret, never over the channel
	// (set before the first Start).
	APIKey  string
	e       *Executor
	count   int
	listen  string // HOST:PORT listened on
	host    string // what the pods dial, with the port listened on
	log     io.Writer
	mu      sync.Mutex
	ln      *shard.Listener
	names   []string
	made    []*made // what each worker's start created
	joinBy  time.Time
	stopped bool
}

// Workers returns n workers whose pods dial back to listen (HOST:PORT;
// port 0 picks one), a host the pods can reach; refused joins are told to
// log (nil: not told).
func (e *Executor) Workers(n int, listen string, log io.Writer) (*Workers, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--coordinator-address %q is not HOST:PORT: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return nil, fmt.Errorf("--coordinator-address %q: give the host the worker pods dial (this pod's IP or a "+
			"Service's name), not a wildcard", listen)
	}
	return &Workers{e: e, count: n, listen: listen, host: host, log: log}, nil
}

// N is how many workers share the cell.
func (w *Workers) N() int { return w.count }

// Start returns worker i once its pod joined (the first call creates
// every worker's Job). Should a worker not join in time, or ctx end,
// every Job of the cell is deleted and the error names the worker, with
// its pod's events.
func (w *Workers) Start(ctx context.Context, i int) (*shard.Peer, error) {
	if i == 0 {
		if err := w.launch(ctx); err != nil {
			w.stop()
			return nil, err
		}
	}
	name, m := w.names[i], w.made[i]
	jctx, cancel := context.WithDeadline(ctx, w.joinBy)
	conn, err := w.ln.Conn(jctx, i)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			w.stop()
			return nil, fmt.Errorf("worker %d (job %s/%s): cancelled before it joined; the cell's jobs are deleted: %w",
				i, w.e.Namespace, name, ctx.Err())
		}
		why := w.e.notJoined(ctx, name) // before its Job and pod are deleted
		w.stop()
		return nil, fmt.Errorf("worker %d (job %s/%s) did not connect within %s (--schedule-timeout); the cell's jobs "+
			"are deleted; %s", i, w.e.Namespace, name, w.e.ScheduleTimeout, why)
	}
	if i == w.count-1 {
		w.ln.Close()
	}
	var once sync.Once
	var killed atomic.Bool
	kill := func() {
		once.Do(func() {
			killed.Store(true)
			_ = conn.Close()
			_ = w.e.cleanup(ctx, m)
		})
	}
	return &shard.Peer{
		Name:     fmt.Sprintf("worker %d (job %s)", i, name),
		Conn:     shard.NewConn(conn, conn),
		KeyApart: true, // the pod reads it from its Secret
		Wait: func() error {
			_ = conn.Close()
			if killed.Load() {
				return errors.New("killed: its job is deleted")
			}
			err := w.waitJob(ctx, name)
			once.Do(func() {
				if cerr := w.e.cleanup(ctx, m); cerr != nil {
					err = errors.Join(err, cerr)
				}
			})
			if killed.Load() {
				return errors.New("killed: its job is deleted")
			}
			return err
		},
		Kill: kill,
	}, nil
}

// launch listens, then creates each worker's Job with its Secret holding
// the cell's token.
func (w *Workers) launch(ctx context.Context) error {
	token := shard.NewToken()
	var warn func(error)
	if w.log != nil {
		warn = func(err error) { fmt.Fprintf(w.log, "warning: %v\n", err) }
	}
	ln, err := shard.Listen(w.listen, token, w.count, warn)
	if err != nil {
		return fmt.Errorf("--coordinator-address: %w", err)
	}
	addr := net.JoinHostPort(w.host, strconv.Itoa(ln.Port()))
	var r [3]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	shardID := hex.EncodeToString(r[:])
	w.mu.Lock()
	w.ln, w.names, w.made = ln, make([]string, w.count), make([]*made, w.count)
	w.mu.Unlock()
	w.joinBy = time.Now().Add(w.e.ScheduleTimeout)
	for i := range w.count {
		name := fmt.Sprintf("aiperf-worker-%s-%d", shardID, i)
		meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"app.kubernetes.io/name": "aiperf", "app.kubernetes.io/component": "worker",
			LabelShard: shardID, LabelWorker: strconv.Itoa(i),
		}}
		values := map[string]string{WorkerTokenEnv: token}
		if w.APIKey != "" {
			values[runner.APIKeyEnv] = w.APIKey
		}
		secret, env := secretEnv(meta, values)
		o := trialObjects{secret: secret,
			job: w.e.podJob(meta, []string{"worker", "--connect", addr, "--worker-index", strconv.Itoa(i)}, env, nil, nil)}
		m := &made{name: name}
		w.mu.Lock()
		w.names[i], w.made[i] = name, m
		w.mu.Unlock()
		if err := w.e.start(ctx, o, w.joinBy, m); err != nil {
			return fmt.Errorf("worker %d (job %s/%s): %w", i, w.e.Namespace, name, err)
		}
	}
	return nil
}

// stop stops listening and deletes every Job of the cell created so far.
func (w *Workers) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.stopped = true
	if w.ln != nil {
		w.ln.Close()
	}
	for _, m := range w.made {
		if m != nil {
			_ = w.e.cleanup(context.Background(), m)
		}
	}
}

// waitJob waits for the worker's Job to end once its channel closed, and
// says how it ended: how its pod ended (evicted, OOMKilled, its exit code)
// and its log's last line explain a failure.
func (w *Workers) waitJob(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workerExitWait)
	defer cancel()
	job, _, err := w.e.wait(ctx, name, time.Now().Add(w.e.ScheduleTimeout)) // its pod started: it joined
	if err != nil {
		return err
	}
	failed, why := jobFailed(job)
	if !failed {
		return nil
	}
	err = fmt.Errorf("its pod failed (%s%s)", why, w.e.podFailure(ctx, name))
	if log, lerr := w.e.readLog(ctx, name); lerr == nil {
		lines := strings.Split(strings.TrimSpace(string(log)), "\n")
		if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
			err = fmt.Errorf("%w: %s", err, last)
		}
	}
	return err
}
