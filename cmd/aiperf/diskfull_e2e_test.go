//go:build linux

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// smallDisk mounts a 2 MiB tmpfs for the test, or skips it where mounting
// is not allowed (not root).
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("a full disk needs a small tmpfs, which this user cannot mount (%v): store.TestPendingFirstBatchOnAFullDisk and "+
			"TestCompleteWaitsOutAFullDisk pin the behaviour without one", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillDisk writes a file into dir until its filesystem is full and
// returns the func that removes it.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	block := make([]byte, 4096)
	for {
		if _, err = f.Write(block); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())
	return func() { require.NoError(t, os.Remove(path)) }
}

// TestBriefDiskFullLosesNoRun: a run whose store (on a small tmpfs) fills
// up while the load goes, from its first request on, ends with every
// record stored. Mid-run: the disk is freed after the first batch of
// records failed (the run said so) and before the load ends, which used to
// lose the run ("its row is gone"). At the end: the disk is still full
// when the run is stored; it says so, waits, and stores the run once the
// disk has room.
func TestBriefDiskFullLosesNoRun(t *testing.T) {
	const requests, held = 6000, 4200 // the first batch of records is 4096
	for _, tc := range []struct {
		name   string
		freeAt string // what the run says when the test frees the disk
	}{
		{"freed mid-run", "while the run goes: the disk holding store"},
		{"freed at the end", "trying again every"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disk := smallDisk(t)
			m := startMock(t, mock.Config{Fast: true})
			started, filled, freed := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var n atomic.Int64
			var once sync.Once
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/") {
					switch i := n.Add(1); {
					case i == 1:
						once.Do(func() { close(started) })
						<-filled
					case i > held && tc.name == "freed mid-run":
						<-freed // the load goes on until the disk has room again
					}
				}
				m.srv.Handler().ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() {
				select {
				case <-freed:
				default:
					close(freed)
				}
			})

			path := filepath.Join(disk, "aiperf.db")
			cmd, stdout, stderr := startAiperf(t, t.TempDir(), path,
				quick(srv.URL, "--concurrency", "8", "--request-count", "6000", "--artifact-dir", "out")...)

			<-started // the store is open, the load begins
			free := fillDisk(t, disk)
			close(filled)
			awaitOutput(t, stderr, tc.freeAt)
			free()
			close(freed)
			require.Equal(t, ExitOK, exitCode(t, cmd, 2*time.Minute), "stdout:\n%s\nstderr:\n%s", stdout, stderr)

			assert.Contains(t, stderr.String(), "store "+path+" is full (", "a full disk is called one")
			assert.Contains(t, stdout.String(), "Stored: run 1 in "+path)
			assert.Contains(t, stdout.String(), "Export: "+filepath.Join("out", "profile_export.jsonl"))
			db, err := store.OpenReadOnly(path)
			require.NoError(t, err)
			defer db.Close()
			rows, err := db.ListRuns(context.Background(), store.RunFilter{})
			require.NoError(t, err)
			require.Len(t, rows, 1)
			assert.Equal(t, result.StatusComplete, rows[0].Status)
			assert.Equal(t, requests, rows[0].RecordCount)
			run, err := db.GetRun(context.Background(), rows[0].ID, true)
			require.NoError(t, err)
			assert.Len(t, run.Records, requests, "every record is stored")
			check, err := db.IntegrityCheck(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "ok", check)
		})
	}
}

// TestStoreOnAFullDiskIsRefused: a store that cannot be written for a full
// disk is refused before anything is sent, saying so.
func TestStoreOnAFullDiskIsRefused(t *testing.T) {
	disk := smallDisk(t)
	path := filepath.Join(disk, "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	fillDisk(t, disk)
	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, t.TempDir(), append([]string{"--store", path}, quick(m.URL, "--request-count", "2")...)...)
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "store "+path+" cannot be written: its disk is full")
	assert.Zero(t, m.control().InferenceRequests)
}
