package stopsignal

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNames: the signals that stop a command are named for the user, not
// as Go names them ("interrupt", "terminated", "hangup").
func TestNames(t *testing.T) {
	assert.Equal(t, "SIGINT (Ctrl-C)", Name(os.Interrupt))
	assert.Equal(t, "SIGTERM", Name(syscall.SIGTERM))
	assert.Equal(t, "SIGHUP (hang-up: the terminal was closed)", Name(syscall.SIGHUP))
	assert.Equal(t, []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}, Signals(), "SIGHUP is not ignored in a test")
}
