package ctxio

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read goes through until the context ends, then fails with its error.
func TestReaderStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader("abcdef"))
	p := make([]byte, 3)
	n, err := r.Read(p)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(p[:n]))
	cancel()
	_, err = io.ReadAll(r)
	assert.ErrorIs(t, err, context.Canceled)
}
