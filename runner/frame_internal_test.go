package runner

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The frames of one output share one budget: each decoded frame spends
// what it holds, and one past what is left is refused, whatever its header
// says, before it is decompressed.
func TestFramesShareOneDecodeBudget(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 600)
	out := encodeFrame(kindFile, payload, "name=a") + encodeFrame(kindFile, payload, "name=b")
	frames, err := scanFrames(strings.NewReader(out))
	require.NoError(t, err)
	require.Len(t, frames, 2)
	require.Same(t, frames[0].budget, frames[1].budget, "one budget for the output")
	*frames[0].budget = 1000
	b, err := frames[0].decode()
	require.NoError(t, err)
	assert.Equal(t, payload, b)
	_, err = frames[1].decode()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over the 256 MiB the frames of one output may hold")

	// A bomb that lies about its size is cut at the size it claims.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(bytes.Repeat([]byte{0}, 4<<20))
	_ = zw.Close()
	sum := sha256.Sum256(nil)
	f := frame{kind: kindResult, header: map[string]string{"bytes": strconv.Itoa(100), "sha256": hex.EncodeToString(sum[:])},
		data: base64.StdEncoding.EncodeToString(z.Bytes())}
	_, err = f.decode()
	assert.ErrorContains(t, err, "checksum mismatch (101 bytes")
}
