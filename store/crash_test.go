package store_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// Helper processes: the test binary re-executed with these variables set.
const (
	helperDBEnv    = "AIPERF_STORE_HELPER_DB"
	helperSweepEnv = "AIPERF_STORE_HELPER_SWEEP" // "NAME:TRIALS" for TestHelperIngestSweep
)

// TestHelperIngestForever is not a test: run as a child process by
// TestKilledMidIngestLeavesNoPartialRun, it saves large runs back to back
// until it is killed, printing "saved ID" after each.
func TestHelperIngestForever(t *testing.T) {
	path := os.Getenv(helperDBEnv)
	if path == "" || os.Getenv(helperSweepEnv) != "" {
		t.Skip("helper process")
	}
	db, err := store.Open(path)
	require.NoError(t, err)
	for {
		id, err := db.SaveRun(context.Background(), newRun(runOpts{name: "crash", records: 3000}), "")
		require.NoError(t, err)
		fmt.Printf("saved %d\n", id)
	}
}

// TestHelperIngestSweep is not a test: run as a child process by
// TestConcurrentWritersLoseNothing, it stores a sweep of TRIALS trials.
func TestHelperIngestSweep(t *testing.T) {
	path, spec := os.Getenv(helperDBEnv), os.Getenv(helperSweepEnv)
	if path == "" || spec == "" {
		t.Skip("helper process")
	}
	name, n, _ := strings.Cut(spec, ":")
	trials, err := strconv.Atoi(n)
	require.NoError(t, err)
	ctx := context.Background()
	db, err := store.Open(path)
	require.NoError(t, err)
	defer db.Close()
	sweepID, err := db.BeginSweep(ctx, store.SweepMeta{Name: name, Trials: trials})
	require.NoError(t, err)
	cell := testCell(name, 4, 0)
	for trial := 1; trial <= trials; trial++ {
		_, err := db.SaveRun(ctx, newRun(runOpts{name: name, records: 200, sweepID: sweepID, cell: &cell, trial: trial}), "")
		require.NoError(t, err)
	}
	require.NoError(t, db.FinishSweep(ctx, sweepID, result.StatusComplete))
}

func helper(t *testing.T, name, path string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperDBEnv+"="+path), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// statsPerRun is how many run_stats rows newRun produces.
func statsPerRun(t *testing.T) int {
	db := MustOpenDB(t)
	id, err := db.SaveRun(context.Background(), newRun(runOpts{records: 1}), "")
	require.NoError(t, err)
	return count(t, db, `SELECT count(*) FROM run_stats WHERE run_id = ?`, id)
}

func TestKilledMidIngestLeavesNoPartialRun(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "aiperf.db")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	const kills = 5
	saved := 0
	for i := range kills {
		cmd := helper(t, "TestHelperIngestForever", path)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Wait until the child is writing, then kill it at a random moment
		// (it spends nearly all its time inside SaveRun's transaction).
		select {
		case line, ok := <-lines:
			require.True(t, ok, "helper %d exited before saving", i)
			require.True(t, strings.HasPrefix(line, "saved "), line)
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			t.Fatalf("helper %d saved nothing", i)
		}
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill()) // SIGKILL
		for line := range lines {
			if strings.HasPrefix(line, "saved ") {
				saved++
			}
		}
		cmd.Wait()
		saved++ // the first line
	}

	ctx := context.Background()
	db := openAt(t, path)
	verdict, err := db.IntegrityCheck(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ok", verdict)
	runs := count(t, db, `SELECT count(*) FROM runs`)
	assert.GreaterOrEqual(t, runs, saved, "every run reported saved is there")
	t.Logf("%d runs stored across %d kills", runs, kills)
	want := statsPerRun(t)
	assert.Zero(t, count(t, db, `SELECT count(*) FROM runs r WHERE record_count != 3000
		OR record_count != (SELECT count(*) FROM records WHERE run_id = r.id)`), "runs with missing records")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM run_stats WHERE run_id = r.id) != ?`, want),
		"runs with missing statistics")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM control_calls WHERE run_id = r.id) != 2`),
		"runs with missing control-hook calls")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM records WHERE run_id NOT IN (SELECT id FROM runs)`), "orphan records")
	assert.Zero(t, count(t, db, `SELECT count(*) FROM run_stats WHERE run_id NOT IN (SELECT id FROM runs)`), "orphan statistics")
}

func TestConcurrentWritersLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "aiperf.db") // created by whichever child opens it first
	const trials = 50
	var cmds []*exec.Cmd
	for _, name := range []string{"before", "after"} {
		cmd := helper(t, "TestHelperIngestSweep", path, fmt.Sprintf("%s=%s:%d", helperSweepEnv, name, trials))
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}

	ctx := context.Background()
	db := openAt(t, path)
	verdict, err := db.IntegrityCheck(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ok", verdict)
	assert.Equal(t, 2*trials, count(t, db, `SELECT count(*) FROM runs`))
	assert.Equal(t, 2*trials*200, count(t, db, `SELECT count(*) FROM records`))
	assert.Equal(t, store.MigrationCount(), count(t, db, `SELECT count(*) FROM migrations`))
	for _, name := range []string{"before", "after"} {
		s, err := db.SweepRuns(ctx, name, nil)
		require.NoError(t, err)
		assert.Equal(t, result.StatusComplete, s.Sweep.Status)
		keys, err := db.CompletedTrialKeys(ctx, s.Sweep.ID)
		require.NoError(t, err)
		assert.Len(t, keys, trials, name)
	}
}
