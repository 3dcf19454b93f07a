package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// execSQL runs statements on the SQLite file at path with a plain
// connection, to shape a store the way another program (or a newer aiperf)
// would.
func execSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

// newStore creates an empty store at path.
func newStore(t *testing.T, path string) {
	t.Helper()
	db, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

// badStore is a store that cannot record a run, set up at path.
type badStore struct {
	name  string
	setup func(t *testing.T, path string)
	want  string // in the error, after "store <path> "
}

func badStores(t *testing.T) []badStore {
	cases := []badStore{
		{"directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) },
			"is a directory, not a database file: give a file path such as "},
		{"text file", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("id,name\n1,not a database\n"), 0o644))
		}, "is not an SQLite database (file is not a database)"},
		{"truncated", func(t *testing.T, path string) {
			newStore(t, path)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, fi.Size()/2))
		}, "is damaged (database disk image is malformed): restore it from a backup"},
		{"newer schema", func(t *testing.T, path string) {
			newStore(t, path)
			execSQL(t, path, `INSERT INTO migrations (name, applied_at) VALUES ('migration/0042_future.sql', '')`)
		}, "was written by a newer aiperf (schema 42 > "},
		{name: "a migration's row lost", setup: func(t *testing.T, path string) {
			newStore(t, path)
			execSQL(t, path, `DELETE FROM migrations WHERE name = 'migration/0018_audit_tallies.sql'`)
		}, want: "is damaged (migration 0018_audit_tallies.sql cannot be applied: duplicate column name: audit_tallies; " +
			"its tables do not match the migrations it records): restore it from a backup"},
		{name: "its directory is a file", setup: func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(filepath.Dir(path), []byte("hello\n"), 0o644))
		}, want: "cannot be created: its directory "},
	}
	return append(cases,
		badStore{"read-only file", func(t *testing.T, path string) {
			newStore(t, path)
			readOnly(t, path)
		}, "is read-only (attempt to write a readonly database): make the file writable"},
		badStore{"read-only directory", func(t *testing.T, path string) {
			require.NoError(t, os.Mkdir(filepath.Dir(path), 0o755))
			newStore(t, path)
			readOnly(t, filepath.Dir(path))
		}, "cannot be written: its directory "},
	)
}

// readOnly makes a file or directory read-only for this process: its mode
// for a user, the immutable attribute for root, whom modes do not stop (the
// test is skipped where chattr is refused).
func readOnly(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	if os.Geteuid() != 0 {
		require.NoError(t, os.Chmod(path, fi.Mode().Perm()&^0o222))
		t.Cleanup(func() { os.Chmod(path, fi.Mode().Perm()) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("root ignores file modes, and chattr +i %s failed: %v %s", path, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

// TestUnusableStoreRefusedBeforeTraffic: profile, profile with several
// trials and sweep refuse a store that could not record the result, exit 2,
// before anything reaches the server.
func TestUnusableStoreRefusedBeforeTraffic(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	for _, tc := range badStores(t) {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "store", "aiperf.db")
			if tc.name != "read-only directory" && tc.name != "its directory is a file" { // those make it
				require.NoError(t, os.Mkdir(filepath.Dir(path), 0o755))
			}
			tc.setup(t, path)
			script := writeFile(t, root, "s.star", smallBase+`sweep(name = "s", base = base)`)
			for _, args := range [][]string{
				quick(m.URL, "--request-count", "3"),
				quick(m.URL, "--request-count", "3", "--num-profile-runs", "2"),
				{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=unused"},
			} {
				inv := cli(t, root, append([]string{"--store", path}, args...)...)
				assert.Equal(t, ExitUsage, inv.code, "%s: %s", args[0], inv.stderr)
				assert.Contains(t, inv.stderr, "aiperf: error: store "+path+" "+tc.want, args[0])
				assert.Contains(t, inv.stderr, "; nothing was sent; --store PATH or AIPERF_STORE picks another file", args[0])
				assert.Empty(t, inv.stdout, args[0])
			}
			single := cli(t, root, append([]string{"--store", path}, quick(m.URL)...)...)
			assert.Contains(t, single.stderr, "picks another file, --no-store records nothing\n")
			assert.NoDirExists(t, filepath.Join(root, "artifacts"), "nothing was written")
		})
	}
	assert.Empty(t, m.control().Events, "no request, no control call")
}

// TestReadOnlyStoreCanBeRead: a store in a read-only file or directory is
// still listed, shown, exported and compared; what would write it is
// refused.
func TestReadOnlyStoreCanBeRead(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, what := range []string{"file", "directory"} {
		t.Run(what, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "store", "aiperf.db")
			for _, name := range []string{"a", "b"} {
				inv := cli(t, root, append([]string{"--store", path}, quick(m.URL, "--request-count", "3", "--name", name)...)...)
				require.Equal(t, ExitOK, inv.code, inv.stderr)
			}
			target := path
			if what == "directory" {
				target = filepath.Dir(path)
			}
			readOnly(t, target)
			sent := m.control().InferenceRequests

			for _, args := range [][]string{
				{"runs", "list"}, {"runs", "show", "1"}, {"runs", "export", "2", "--format", "csv"}, {"compare", "a", "b"},
			} {
				inv := cli(t, root, append([]string{"--store", path}, args...)...)
				assert.Equal(t, ExitOK, inv.code, "%v: %s", args, inv.stderr)
				assert.NotEmpty(t, inv.stdout, args)
			}
			for _, args := range [][]string{{"runs", "delete", "1"}, quick(m.URL)} {
				inv := cli(t, root, append([]string{"--store", path}, args...)...)
				assert.Equal(t, ExitUsage, inv.code, "%v: %s", args, inv.stderr)
				assert.Contains(t, inv.stderr, "store "+path+" ")
			}
			assert.Equal(t, sent, m.control().InferenceRequests, "the refused profile sent nothing")
		})
	}
}

// TestProfileSaveFailureKeepsTableAndExports: a store that opens but
// fails to save the run after the load (here a trigger that aborts every
// insert into runs) still gets the console table and the exports, and the
// error says where they are.
func TestProfileSaveFailureKeepsTableAndExports(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	path := filepath.Join(dir, "aiperf.db")
	newStore(t, path)
	execSQL(t, path, `CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`)

	inv := cli(t, dir, quick(m.URL, "--request-count", "5", "--artifact-dir", "out")...)
	assert.Equal(t, ExitFailure, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "save run to store "+path+": ")
	assert.Contains(t, inv.stderr, "disk on fire")
	assert.Contains(t, inv.stderr, "the run is not stored, its exports are in out")
	assert.Contains(t, inv.stdout, "Time to First Token", "the table is printed")
	assert.Contains(t, inv.stdout, "Export: "+filepath.Join("out", "profile_export_aiperf.json"))
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 5.0, metricAvg(t, export, "request_count"))
	assert.Equal(t, 5, countLines(t, filepath.Join(dir, "out", "profile_export.jsonl")))
}

// TestProfileExportFailureKeepsTable: when the artifact directory cannot
// be written, the exports (inputs.json too) go to a temporary directory,
// the table is still printed and the run stored, and the command fails
// naming both places.
func TestProfileExportFailureKeepsTable(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	writeFile(t, dir, "out", "a file where the artifact directory should be")

	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--artifact-dir", "out")...)
	assert.Equal(t, ExitFailure, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "write exports to out: ")
	assert.Contains(t, inv.stdout, "Time to First Token", "the table is printed")
	fallback := regexp.MustCompile(`wrote them to (\S+) instead`).FindStringSubmatch(inv.stderr)
	require.Len(t, fallback, 2, inv.stderr)
	assert.Equal(t, tmp, filepath.Dir(fallback[1]))
	assert.Contains(t, inv.stdout, "Export: "+filepath.Join(fallback[1], "profile_export_aiperf.json"))
	assert.Equal(t, 4, countLines(t, filepath.Join(fallback[1], "profile_export.jsonl")))
	inputs := regexp.MustCompile(`write inputs.json: [^;]*; wrote it to\s+(\S+inputs\.json)`).FindStringSubmatch(inv.stdout)
	require.Len(t, inputs, 2, "inputs.json, what was sent, is kept too:\n%s", inv.stdout)
	assert.Equal(t, tmp, filepath.Dir(filepath.Dir(inputs[1])))
	assert.FileExists(t, inputs[1])

	show := cli(t, dir, "runs", "show", "1")
	require.Equal(t, ExitOK, show.code, show.stderr)
	assert.Regexp(t, `artifacts:\s+`+regexp.QuoteMeta(fallback[1]), show.stdout, "the store points at the exports")
}

// gate holds the first inference request a server receives until release
// is closed, and counts every inference request.
type gate struct {
	arrived   chan struct{} // closed when the first request arrives
	release   chan struct{}
	requests  atomic.Int64
	firstOnce sync.Once
}

// startGatedMock is startMock behind a gate.
func startGatedMock(t *testing.T, cfg mock.Config) (*httptest.Server, *mock.Server, *gate) {
	t.Helper()
	cfg.CountTokens = countTokens()
	srv, err := mock.New(cfg)
	require.NoError(t, err)
	g := &gate{arrived: make(chan struct{}), release: make(chan struct{})}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/") {
			g.requests.Add(1)
			first := false
			g.firstOnce.Do(func() { first = true })
			if first {
				close(g.arrived)
				<-g.release
			}
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	})
	return ts, srv, g
}

// lockScript is a sweep of two trials; vars n changes its plan digest.
const lockScript = `
base = profile(model = "mock-model", url = vars["url"], tokenizer = vars["tok"], streaming = True,
               request_count = int(vars.get("n", "4")), synthetic_input_tokens_mean = 16, output_tokens_mean = 2,
               num_dataset_entries = 4)
sweep(name = "locked", base = base, trials = 2)
`

// lockSweep writes lockScript into dir and returns the command line that
// runs it against url.
func lockSweep(t *testing.T, dir, url string) []string {
	t.Helper()
	script := writeFile(t, dir, "lock.star", lockScript)
	return []string{"sweep", script, "--set", "url=" + url, "--set", "tok=" + tinyTokenizer(t), "--ui", "none"}
}

// heldSweep starts `aiperf args...` in another process, as a user's second
// terminal would, and returns once its first trial's first request is
// held at g.
func heldSweep(t *testing.T, dir string, g *gate, args ...string) *aiperfCmd {
	t.Helper()
	cmd := newAiperfCmd(t, dir, args...)
	require.NoError(t, cmd.Start())
	cmd.await(t, g.arrived, "the first request")
	return cmd
}

// TestConcurrentResumeIsRefused: while one process runs a sweep, a second
// `--resume` of it (or another plan of it writing the same directory)
// refuses at once, exit 2, naming the owner, and sends nothing; the first
// finishes with every trial run once, and releases its claim.
func TestConcurrentResumeIsRefused(t *testing.T) {
	subprocesses(t)
	ts, srv, g := startGatedMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	args := lockSweep(t, dir, ts.URL)
	// The first sweep is another process, as a user's second terminal is.
	first := heldSweep(t, dir, g, append(args, "--resume")...)

	second := cli(t, dir, append(args, "--resume")...)
	assert.Equal(t, ExitUsage, second.code, second.stderr)
	assert.Contains(t, second.stderr, fmt.Sprintf(`sweep "locked" is in use by another aiperf (pid %d on host `, first.Process.Pid))
	assert.Contains(t, second.stderr, "wait for it to end")
	other := cli(t, dir, append(args, "--set", "n=5")...)
	assert.Equal(t, ExitUsage, other.code, other.stderr)
	assert.Contains(t, other.stderr, "artifact directory "+filepath.Join(dir, "artifacts", "locked")+" is in use by another aiperf")
	assert.Equal(t, int64(1), g.requests.Load(), "neither sent anything while the first ran")

	close(g.release)
	require.NoError(t, first.Wait(), "first sweep:\n%s", first.out)
	assert.Equal(t, 8, srv.Control().InferenceRequests, "two trials of four requests, each run once")
	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "locked"})
	require.NoError(t, err)
	assert.Len(t, runs, 2)

	third := cli(t, dir, append(args, "--resume")...)
	require.Equal(t, ExitOK, third.code, "the claim was released: %s", third.stderr)
	assert.Equal(t, 8, srv.Control().InferenceRequests, "every trial was already stored")
}

// TestNewSweepKeepsEarlierTrials: a new sweep whose trial directories hold
// an earlier sweep's trials is refused, exit 2, before anything is sent;
// --resume and another --artifact-dir proceed.
func TestNewSweepKeepsEarlierTrials(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	args := lockSweep(t, dir, m.URL)
	require.Equal(t, ExitOK, cli(t, dir, args...).code)
	resultFile := filepath.Join(dir, "artifacts", "locked", "base", "trial_0001", "result.json")
	before, err := os.ReadFile(resultFile)
	require.NoError(t, err)
	sent := m.control().InferenceRequests

	again := cli(t, dir, args...)
	assert.Equal(t, ExitUsage, again.code, again.stderr)
	assert.Contains(t, again.stderr, `sweep "locked": `+filepath.Join("artifacts", "locked", "base", "trial_0001")+
		" (and 1 more) holds a trial of an earlier sweep, which a new sweep would overwrite; nothing was sent: --resume continues that sweep")
	changed := cli(t, dir, append(args, "--set", "n=3", "--resume")...)
	assert.Equal(t, ExitUsage, changed.code, changed.stderr)
	assert.Contains(t, changed.stderr, `--resume found no sweep "locked" with these cells in `)
	assert.Equal(t, sent, m.control().InferenceRequests, "the refused sweeps sent nothing")
	after, err := os.ReadFile(resultFile)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the earlier trial is untouched")

	require.Equal(t, ExitOK, cli(t, dir, append(args, "--resume")...).code)
	assert.Equal(t, sent, m.control().InferenceRequests, "resume: every trial was already stored")
	elsewhere := cli(t, dir, append(args, "--artifact-dir", "second")...)
	require.Equal(t, ExitOK, elsewhere.code, elsewhere.stderr)
	assert.Equal(t, 2*sent, m.control().InferenceRequests)
	assert.FileExists(t, filepath.Join(dir, "second", "locked", "base", "trial_0002", "result.json"))
}

// aiperfCmd is this test binary run as aiperf in another process.
type aiperfCmd struct {
	*exec.Cmd
	out *bytes.Buffer // stdout and stderr, to read after Wait
}

// newAiperfCmd prepares `aiperf --store <dir>/aiperf.db args...` in dir;
// call subprocesses(t) first.
func newAiperfCmd(t *testing.T, dir string, args ...string) *aiperfCmd {
	t.Helper()
	cmd := exec.Command(builtBinary(t, "aiperf"), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...)...)
	cmd.Dir = dir
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &aiperfCmd{Cmd: cmd, out: out}
}

// await returns once ch is closed, or kills the process and fails with
// its output after 3 minutes (one that exited early never closes ch).
func (c *aiperfCmd) await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(3 * time.Minute):
		_ = c.Process.Kill()
		_ = c.Wait() // the output is complete
		t.Fatalf("%s never arrived:\n%s", what, c.out)
	}
}

// TestKilledSweepIsResumed: a sweep killed outright (SIGKILL: no chance to
// release its claim) does not block `--resume`, which takes the claim over,
// says so, and runs the trials that were not stored.
func TestKilledSweepIsResumed(t *testing.T) {
	subprocesses(t)
	ts, srv, g := startGatedMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	args := lockSweep(t, dir, ts.URL)
	first := heldSweep(t, dir, g, args...)
	require.NoError(t, first.Process.Kill())
	_ = first.Wait() // reaped: its pid is free
	close(g.release)
	// Its trial child, orphaned, finishes its clean stop on its own; a
	// resume while it runs is refused (TestTrialRunningKnowsAnOrphanedChild),
	// so wait for it to end, however slow the machine.
	awaitOrphansGone(t, dir)

	resumed := cli(t, dir, append(args, "--resume")...)
	require.Equal(t, ExitOK, resumed.code, resumed.stderr)
	assert.Contains(t, resumed.stderr, fmt.Sprintf(`note: sweep "locked" was claimed by pid %d on this host since `, first.Process.Pid))
	assert.Contains(t, resumed.stderr, "which is no longer running: taking it over")
	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "locked"})
	require.NoError(t, err)
	assert.Len(t, runs, 2, "both trials stored once")
	assert.GreaterOrEqual(t, srv.Control().InferenceRequests, 8)
}

// awaitOrphansGone waits until no trial process recorded under dir (a
// runner.PIDFile in a trial directory) still runs (the limit only guards
// against a hang).
func awaitOrphansGone(t *testing.T, dir string) {
	t.Helper()
	var trials []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == runner.PIDFile {
			trials = append(trials, filepath.Dir(path))
		}
		return err
	}))
	for _, trial := range trials {
		require.Eventually(t, func() bool {
			_, running := runner.TrialRunning(trial)
			return !running
		}, 2*time.Minute, 10*time.Millisecond, "the orphaned trial in %s", trial)
	}
}

// TestProfileNamesKeepTheirExportsApart: two runs labelled --name before
// and --name after, without --artifact-dir, write their exports to two
// directories (the default ends with the name), and each prints the id it
// was stored under and, under --ui none too, the tokenizer that counted.
func TestProfileNamesKeepTheirExportsApart(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	for i, name := range []string{"before", "after"} {
		inv := cli(t, dir, quick(m.URL, "--request-count", "3", "--name", name)...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		out := filepath.Join("artifacts", "mock-model-openai-chat-concurrency1-"+name)
		assert.Contains(t, inv.stdout, "Export: "+filepath.Join(out, "profile_export_aiperf.json"))
		store := filepath.Join(dir, "aiperf.db") // cli's --store
		assert.Contains(t, inv.stdout, fmt.Sprintf("Stored: run %d in %s\n  aiperf runs show %d --store %s\n", i+1, store, i+1, store))
		assert.Contains(t, inv.stdout, "Tokens counted with o200k_base", "--ui none still names the tokenizer")
	}
	for _, name := range []string{"before", "after"} {
		assert.FileExists(t, filepath.Join(dir, "artifacts", "mock-model-openai-chat-concurrency1-"+name, "profile_export.jsonl"))
	}
}
