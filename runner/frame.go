package runner

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/result"
)

// A result frame carries a trial's result through a channel that only passes
// text lines, a pod's log among them, mixed with whatever else the process
// prints. Its lines:
//
//	AIPERF-RESULT-BEGIN v1 bytes=<n> sha256=<hex>
//	AIPERF-RESULT-DATA <base64 of the gzipped result JSON, up to frameWidth characters>
//	...
//	AIPERF-RESULT-END
//
// n and the sha256 are those of the result JSON. Other lines may come
// between them (another stream of the process, written line by line); a
// frame that is cut short, altered or incomplete is refused, never decoded.
const (
	frameBegin = "AIPERF-RESULT-BEGIN v1 "
	frameData  = "AIPERF-RESULT-DATA "
	frameEnd   = "AIPERF-RESULT-END"
	frameWidth = 1024
)

// ErrNoFrame is returned by ReadFrame when the text holds no result frame.
var ErrNoFrame = errors.New("no result frame in the output")

// WriteFrame writes run as a result frame to w, in one write.
func WriteFrame(w io.Writer, run *result.Run) error {
	js, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("encode result frame: %w", err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(js) // writes to a bytes.Buffer cannot fail
	_ = zw.Close()
	enc := base64.StdEncoding.EncodeToString(z.Bytes())
	sum := sha256.Sum256(js)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%sbytes=%d sha256=%s\n", frameBegin, len(js), hex.EncodeToString(sum[:]))
	for len(enc) > 0 {
		n := min(frameWidth, len(enc))
		b.WriteString(frameData + enc[:n] + "\n")
		enc = enc[n:]
	}
	b.WriteString(frameEnd + "\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write result frame: %w", err)
	}
	return nil
}

// ReadFrame decodes the last result frame in r (a process's output) into the
// result a Local trial reads from its ResultFile, checked the same way.
func ReadFrame(r io.Reader) (*result.Run, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var (
		header string
		data   strings.Builder
		open   bool
		last   *frame
	)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, frameBegin):
			header, open = line[len(frameBegin):], true
			data.Reset()
		case open && strings.HasPrefix(line, frameData):
			data.WriteString(line[len(frameData):])
		case open && line == frameEnd:
			last, open = &frame{header: header, data: data.String()}, false
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read result frame: %w", err)
	}
	switch {
	case open:
		return nil, errors.New("read result frame: the output ends before the frame's end marker (cut short: the process was killed, or the log rotated)")
	case last == nil:
		return nil, ErrNoFrame
	}
	return last.decode()
}

type frame struct{ header, data string }

func (f *frame) decode() (*result.Run, error) {
	var n int
	var want string
	for _, field := range strings.Fields(f.header) {
		k, v, _ := strings.Cut(field, "=")
		switch k {
		case "bytes":
			n, _ = strconv.Atoi(v)
		case "sha256":
			want = v
		}
	}
	z, err := base64.StdEncoding.DecodeString(f.data)
	if err != nil {
		return nil, fmt.Errorf("decode result frame: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("decode result frame: %w", err)
	}
	js, err := io.ReadAll(io.LimitReader(zr, int64(n)+1))
	if err != nil {
		return nil, fmt.Errorf("decode result frame: %w", err)
	}
	sum := sha256.Sum256(js)
	if len(js) != n || hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("decode result frame: checksum mismatch (%d bytes with sha256 %s, the header says %d bytes with %s)",
			len(js), hex.EncodeToString(sum[:]), n, want)
	}
	return decodeResult(js, "frame")
}
