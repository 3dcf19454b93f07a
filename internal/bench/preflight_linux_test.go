package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPreflightOutOfFilesBlamesTheClient: a client out of file
// descriptors cannot even open the socket of its check that the server
// answers; the error says so and what to do, not that the server is
// unreachable. (A child process lowers its own limit.)
func TestPreflightOutOfFilesBlamesTheClient(t *testing.T) {
	if addr := os.Getenv("BENCH_PREFLIGHT_EMFILE"); addr != "" {
		// Open the network poller first, then allow no more files than
		// are open: the next socket fails with EMFILE.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		defer l.Close()
		free := 0 // the lowest descriptor number not open: the next one a socket gets
		var st syscall.Stat_t
		for syscall.Fstat(free, &st) == nil {
			free++
		}
		lim := syscall.Rlimit{Cur: uint64(free), Max: uint64(free + 64)}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(1)
		}
		fmt.Println(preflight(context.Background(), []string{"http://" + addr}))
		os.Exit(0)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPreflightOutOfFilesBlamesTheClient$")
	cmd.Env = append(os.Environ(), "BENCH_PREFLIGHT_EMFILE="+l.Addr().String())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "connect to server http://"+l.Addr().String()+
		": the client ran out of file descriptors (too many open files): raise `ulimit -n` or lower the concurrency")
	assert.NotContains(t, string(out), "is unreachable")
}
