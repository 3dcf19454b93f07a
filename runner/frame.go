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

// A frame carries a payload through a channel that only passes text lines,
// a pod's log among them, mixed with whatever else the process prints. Its
// lines:
//
//	AIPERF-<KIND>-BEGIN v1 bytes=<n> sha256=<hex>[ name=<escaped name>]
//	AIPERF-<KIND>-DATA <base64 of the gzipped payload, up to frameWidth characters>
//	...
//	AIPERF-<KIND>-END
//
// n and the sha256 are those of the payload. Other lines may come between
// them (another stream of the process, written line by line); a frame that
// is cut short, altered or incomplete is refused, never decoded. A trial
// writes a FILE frame per export (see WriteExports), then the EXPORTS
// manifest, then its RESULT frame (the result JSON): the result is last,
// so that a log cut at its start (rotated) loses exports, which the
// manifest notices, before it loses the result.
const (
	framePrefix = "AIPERF-"
	frameWidth  = 1024

	kindResult  = "RESULT"
	kindFile    = "FILE"
	kindExports = "EXPORTS"
)

// MaxFramePayload is the most a frame's payload may hold once decompressed,
// whatever its header says, and the most the frames decoded from one
// output may hold together: a frame over it fails, never filling memory (a
// gzip bomb). A pod log carries far less than it gzipped (the kubelet
// serves 10 MiB of it by default).
const MaxFramePayload = 256 << 20

// ErrNoFrame is returned by ReadFrame when the text holds no result frame.
var ErrNoFrame = errors.New("no result frame in the output")

// WriteFrame writes run as a result frame to w, in one write.
func WriteFrame(w io.Writer, run *result.Run) error {
	js, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("encode result frame: %w", err)
	}
	if _, err := io.WriteString(w, encodeFrame(kindResult, js, "")); err != nil {
		return fmt.Errorf("write result frame: %w", err)
	}
	return nil
}

// encodeFrame is the frame of payload, attrs ("k=v ...", escaped) added to
// its header.
func encodeFrame(kind string, payload []byte, attrs string) string {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(payload) // writes to a bytes.Buffer cannot fail
	_ = zw.Close()
	enc := base64.StdEncoding.EncodeToString(z.Bytes())
	sum := sha256.Sum256(payload)
	var b strings.Builder
	b.Grow(len(enc) + len(enc)/frameWidth*(len(kind)+14) + 200)
	fmt.Fprintf(&b, "\n%s%s-BEGIN v1 bytes=%d sha256=%s", framePrefix, kind, len(payload), hex.EncodeToString(sum[:]))
	if attrs != "" {
		b.WriteString(" " + attrs)
	}
	b.WriteString("\n")
	data := framePrefix + kind + "-DATA "
	for len(enc) > 0 {
		n := min(frameWidth, len(enc))
		b.WriteString(data + enc[:n] + "\n")
		enc = enc[n:]
	}
	b.WriteString(framePrefix + kind + "-END\n")
	return b.String()
}

// ReadFrame decodes the last result frame in r (a process's output) into the
// result a Local trial reads from its ResultFile, checked the same way.
func ReadFrame(r io.Reader) (*result.Run, error) {
	frames, err := scanFrames(r)
	if err != nil {
		return nil, fmt.Errorf("read result frame: %w", err)
	}
	var last *frame
	for i := range frames {
		if frames[i].kind == kindResult {
			last = &frames[i]
		}
	}
	if last == nil {
		return nil, ErrNoFrame
	}
	js, err := last.decode()
	if err != nil {
		return nil, fmt.Errorf("decode result frame: %w", err)
	}
	return decodeResult(js, "frame")
}

// frame is one frame read back: its kind, header fields and data, and
// what the frames of its output may still decode (shared by them).
type frame struct {
	kind   string
	header map[string]string
	data   string
	budget *int
}

// scanFrames reads every complete frame of r, in order; a frame still open
// when r ends is an error (the process was cut short).
func scanFrames(r io.Reader) ([]frame, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var (
		frames []frame
		cur    *frame
		data   strings.Builder
		budget = MaxFramePayload
	)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		rest, ok := strings.CutPrefix(line, framePrefix)
		if !ok {
			continue
		}
		kind, what, _ := strings.Cut(rest, "-")
		switch {
		case strings.HasPrefix(what, "BEGIN v1 "):
			cur = &frame{kind: kind, header: map[string]string{}, budget: &budget}
			data.Reset()
			for _, field := range strings.Fields(what[len("BEGIN v1 "):]) {
				k, v, _ := strings.Cut(field, "=")
				cur.header[k] = v
			}
		case cur != nil && kind == cur.kind && strings.HasPrefix(what, "DATA "):
			data.WriteString(what[len("DATA "):])
		case cur != nil && kind == cur.kind && what == "END":
			cur.data = data.String()
			frames = append(frames, *cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return frames, err
	}
	if cur != nil {
		return frames, fmt.Errorf("the output ends before the %s frame's end marker (cut short: the process was killed, or the log rotated)",
			strings.ToLower(cur.kind))
	}
	return frames, nil
}

// decode returns the frame's payload, checked against its header's size
// and checksum, and never more than MaxFramePayload (all its output's
// frames together) whatever the header says.
func (f *frame) decode() ([]byte, error) {
	n, err := strconv.Atoi(f.header["bytes"])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("corrupt frame: its header's size bytes=%q is not a size", f.header["bytes"])
	}
	left := MaxFramePayload
	if f.budget != nil {
		left = *f.budget
	}
	if n > left {
		return nil, fmt.Errorf("the frame says it holds %d bytes, over the %d MiB the frames of one output may hold "+
			"(%d MiB left)", n, MaxFramePayload>>20, left>>20)
	}
	want := f.header["sha256"]
	z, err := base64.StdEncoding.DecodeString(f.data)
	if err != nil {
		return nil, fmt.Errorf("corrupt frame: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("corrupt frame: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, int64(n)+1))
	if err != nil {
		return nil, fmt.Errorf("corrupt frame: %w", err)
	}
	if f.budget != nil {
		*f.budget -= len(b)
	}
	sum := sha256.Sum256(b)
	if len(b) != n || hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("checksum mismatch (%d bytes with sha256 %s, the header says %d bytes with %s)",
			len(b), hex.EncodeToString(sum[:]), n, want)
	}
	return b, nil
}
