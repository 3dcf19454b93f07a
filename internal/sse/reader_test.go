package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ev is an event without its stamp, for comparisons.
type ev struct {
	Name string
	Data string
}

var longLine = strings.Repeat("x", 40<<10) // longer than the read buffer

var cases = []struct {
	name string
	in   string
	want []ev
}{
	{"empty input", "", nil},
	{"only blank lines", "\n\n\r\n\r", nil},
	{"data with space", "data: a\n\n", []ev{{"", "a"}}},
	{"data without space", "data:a\n\n", []ev{{"", "a"}}},
	{"only one space is stripped", "data:  a\n\n", []ev{{"", " a"}}},
	{"two events", "data: a\n\ndata: b\n\n", []ev{{"", "a"}, {"", "b"}}},
	{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a"}, {"", "b"}}},
	{"lone cr", "data: a\r\rdata: b\r\r", []ev{{"", "a"}, {"", "b"}}},
	{"mixed line endings", "data: a\r\n\ndata: b\n\r\ndata: c\r\r\n", []ev{{"", "a"}, {"", "b"}, {"", "c"}}},
	{"comment lines", ": ping\n\ndata: a\n: inside\n\n:\n\n", []ev{{"", "a"}}},
	{"event line", "event: error\ndata: {\"error\":\"x\"}\n\n", []ev{{"error", `{"error":"x"}`}}},
	{"event name resets", "event: x\ndata: 1\n\ndata: 2\n\n", []ev{{"x", "1"}, {"", "2"}}},
	{"event without data", "event: ping\n\n", []ev{{"ping", ""}}},
	{"id and retry ignored", "id: 7\nretry: 100\ndata: a\n\nid: 8\n\n", []ev{{"", "a"}}},
	{"unknown field ignored", "foo: bar\ndata: a\n\n", []ev{{"", "a"}}},
	{"several data lines", "data: a\ndata:b\ndata: c\n\n", []ev{{"", "a\nb\nc"}}},
	{"empty data line", "data:\n\n", []ev{{"", ""}}},
	{"data without colon", "data\n\n", []ev{{"", ""}}},
	{"empty data lines join", "data:\ndata:\n\n", []ev{{"", "\n"}}},
	{"colon in value", "data: a:b: c\n\n", []ev{{"", "a:b: c"}}},
	{"trailing space (trt-llm)", "data: {\"a\":1} \n\ndata: [DONE]\n\n", []ev{{"", `{"a":1}`}, {"", "[DONE]"}}},
	{"trailing tab", "data: a\t\n\n", []ev{{"", "a"}}},
	{"blank line of spaces dispatches", "data: a\n  \ndata: b\n\n", []ev{{"", "a"}, {"", "b"}}},
	{"pending event at eof", "data: a\n\ndata: b", []ev{{"", "a"}, {"", "b"}}},
	{"pending event at eof after lf", "data: a\n", []ev{{"", "a"}}},
	{"pending event at eof after cr", "data: a\r", []ev{{"", "a"}}},
	{"done", "data: [DONE]\n\n", []ev{{"", "[DONE]"}}},
	{"long line", "data: " + longLine + "\r\n\r\ndata: b\n\n", []ev{{"", longLine}, {"", "b"}}},
	{"long line with lone cr", "data: " + longLine + "\rdata: z\r\r", []ev{{"", longLine + "\nz"}}},
	{"leading byte order mark", "\ufeffdata: a\n\ndata: b\n\n", []ev{{"", "a"}, {"", "b"}}},
	{"byte order mark, crlf", "\ufeffdata: a\r\n\r\n", []ev{{"", "a"}}},
	{"byte order mark, lone cr", "\ufeffdata: a\rdata: b\r\r", []ev{{"", "a\nb"}}},
	{"byte order mark then blank line", "\ufeff\ndata: a\n\n", []ev{{"", "a"}}},
	{"byte order mark on a long line", "\ufeffdata: " + longLine + "\n\n", []ev{{"", longLine}}},
	{"only one byte order mark is stripped", "\ufeff\ufeffdata: a\n\ndata: b\n\n", []ev{{"", "b"}}},
	{"a later byte order mark is kept", "data: a\n\n\ufeffdata: b\n\n", []ev{{"", "a"}}},
	{"byte order mark in a value is kept", "data: \ufeffa\n\n", []ev{{"", "\ufeffa"}}},
}

// readAll collects every event (Data copied) until Next fails.
func readAll(r *Reader) ([]ev, error) {
	var out []ev
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data)})
	}
}

func counter() func() int64 {
	var n int64
	return func() int64 { n++; return n }
}

func TestReader(t *testing.T) {
	deliveries := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+eof": iotest.DataErrReader,
	}
	for _, tc := range cases {
		for dname, wrap := range deliveries {
			t.Run(tc.name+"/"+dname, func(t *testing.T) {
				got, err := readAll(NewReader(wrap(strings.NewReader(tc.in)), counter()))
				require.ErrorIs(t, err, io.EOF)
				assert.Equal(t, tc.want, got)
				assert.Equal(t, tc.want, reference(tc.in), "reference parser disagrees")
			})
		}
	}
}

func TestReaderOneMiBLine(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	in := "data: " + big + "\r\n\r\ndata: [DONE]\r\n\r\n"
	got, err := readAll(NewReader(iotest.HalfReader(strings.NewReader(in)), counter()))
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, got, 2)
	assert.Equal(t, big, got[0].Data)
	assert.Equal(t, "[DONE]", got[1].Data)
}

// pieces returns one element per Read call.
type pieces []string

func (p *pieces) Read(b []byte) (int, error) {
	if len(*p) == 0 {
		return 0, io.EOF
	}
	n := copy(b, (*p)[0])
	(*p)[0] = (*p)[0][n:]
	if (*p)[0] == "" {
		*p = (*p)[1:]
	}
	return n, nil
}

func TestReaderStampsFirstLineRead(t *testing.T) {
	src := &pieces{
		"data: a\n",                // read 1: first line of a
		"\n",                       // read 2: dispatches a
		"data: b\n\ndata: c\n\n",   // read 3: b and c arrived together
		": comment\n\n",            // read 4: no event
		"da",                       // read 5: partial line
		"ta: d\n",                  // read 6: completes the first line of d
		"data: d2\n\nevent: e\r\n", // read 7
		"data: e\r\n\r\n",          // read 8
	}
	calls := 0
	now := func() int64 { calls++; return int64(calls) * 10 }
	r := NewReader(src, now)
	var stamps []int64
	var data []string
	for {
		e, err := r.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		stamps = append(stamps, e.At)
		data = append(data, string(e.Data))
	}
	assert.Equal(t, []string{"a", "b", "c", "d\nd2", "e"}, data)
	assert.Equal(t, []int64{10, 30, 30, 60, 70}, stamps)
	assert.Equal(t, 8, calls, "one clock reading per read that returned bytes")
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	src := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	r := NewReader(src, counter())
	got, err := readAll(r)
	assert.Equal(t, []ev{{"", "a"}}, got, "the pending event is dropped on a read error")
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "read sse stream")
	_, err = r.Next()
	require.ErrorIs(t, err, boom, "errors are sticky")
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("event: x\ndata: half"), counter())
	_, err := r.Next()
	require.NoError(t, err)
	r.Reset(strings.NewReader("data: fresh\n\n"), counter())
	got, err := readAll(r)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, []ev{{"", "fresh"}}, got)
	// Each stream may open with its own byte order mark.
	r.Reset(strings.NewReader("\ufeffdata: bom\n\n"), counter())
	got, err = readAll(r)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, []ev{{"", "bom"}}, got)
}

// reference is a deliberately naive parser with the same rules, used as an
// oracle: normalise line endings, split, then apply the fields.
func reference(in string) []ev {
	in = strings.TrimPrefix(in, "\ufeff")
	in = strings.ReplaceAll(in, "\r\n", "\n")
	in = strings.ReplaceAll(in, "\r", "\n")
	lines := strings.Split(in, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out []ev
	var name string
	var data []string
	flush := func() {
		if data != nil || name != "" {
			out = append(out, ev{name, strings.Join(data, "\n")})
		}
		name, data = "", nil
	}
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		switch {
		case l == "":
			flush()
		case l[0] == ':':
		default:
			f, v, _ := strings.Cut(l, ":")
			v = strings.TrimPrefix(v, " ")
			switch f {
			case "data":
				data = append(data, v)
			case "event":
				name = v
			}
		}
	}
	flush()
	return out
}

func FuzzReader(f *testing.F) {
	for _, tc := range cases {
		if len(tc.in) < 1024 {
			f.Add(tc.in)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		want := reference(in)
		for _, src := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
			got, err := readAll(NewReader(src, counter()))
			if !errors.Is(err, io.EOF) {
				t.Fatalf("unexpected error %v", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("input %q:\n got %q\nwant %q", in, got, want)
			}
		}
	})
}

// BenchmarkReader parses a stream of vLLM-shaped chunks from memory.
func BenchmarkReader(b *testing.B) {
	const chunks = 256
	var buf bytes.Buffer
	for i := range chunks {
		fmt.Fprintf(&buf, "data: {\"id\":\"chatcmpl-0123456789\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"+
			"\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},"+
			"\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	buf.WriteString("data: [DONE]\n\n")
	stream := buf.Bytes()
	src := bytes.NewReader(stream)
	r := NewReader(src, counter())
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(stream)
		r.Reset(src, counter())
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.N)*(chunks+1)/b.Elapsed().Seconds(), "chunks/s")
}

// endless is a stream of one byte repeated for ever, counting what was read.
type endless struct {
	b    byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

func TestReaderLineOverLimit(t *testing.T) {
	// A line without end: the reader gives up after about the limit
	// instead of buffering the whole stream.
	src := &endless{b: 'x'}
	r := NewReader(io.MultiReader(strings.NewReader("data: "), src), counter())
	_, err := r.Next()
	require.ErrorIs(t, err, ErrTooLarge)
	assert.LessOrEqual(t, src.read, DefaultMaxEvent+2*bufferSize, "read no more than the limit")
	_, again := r.Next()
	assert.ErrorIs(t, again, ErrTooLarge, "the error sticks")
}

func TestReaderEventOverLimit(t *testing.T) {
	for name, in := range map[string]string{
		"one long line":    "data: " + strings.Repeat("a", 100) + "\n\n",
		"many data lines":  strings.Repeat("data: 0123456789\n", 20) + "\n",
		"long line at eof": "data: " + strings.Repeat("a", bufferSize*3),
	} {
		t.Run(name, func(t *testing.T) {
			r := NewReader(strings.NewReader("data: ok\n\n"+in+"data: [DONE]\n\n"), counter())
			r.SetMax(64)
			e, err := r.Next()
			require.NoError(t, err)
			assert.Equal(t, "ok", string(e.Data), "events within the limit are read")
			_, err = r.Next()
			require.ErrorIs(t, err, ErrTooLarge)
		})
	}
	r := NewReader(strings.NewReader("data: "+longLine+"\n\n"), counter())
	r.SetMax(len(longLine))
	e, err := r.Next()
	require.NoError(t, err, "an event exactly at the limit is accepted")
	assert.Len(t, e.Data, len(longLine))
}

// An event says how many bytes were read besides its name and data (its
// lines' field names and terminators, comments, ignored fields, trimmed
// spaces), so that a caller can bound what a stream of junk costs it.
func TestReaderCountsSkippedBytes(t *testing.T) {
	in := ": ping\n\nid: 7\nretry: 5\nevent: x\ndata: ab  \n\ndata: c\n\n"
	r := NewReader(strings.NewReader(in), counter())
	first, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, len(": ping\n\nid: 7\nretry: 5\nevent: x\ndata: ab  \n\n")-len("x")-len("ab"), first.Skipped)
	second, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, len("data: \n\n"), second.Skipped)
}

// Comments without an event between them count toward the limit an
// event's data does: an endless run of them fails instead of being read
// until the stream's deadline.
func TestReaderCommentsOverLimit(t *testing.T) {
	src := strings.NewReader(strings.Repeat(": keep-alive\n\n", 10) + "data: late\n\n")
	r := NewReader(src, counter())
	r.SetMax(64)
	_, err := r.Next()
	require.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorContains(t, err, "comments")
	r = NewReader(strings.NewReader(strings.Repeat(": keep-alive\n\n", 4)+"data: soon\n\n"), counter())
	r.SetMax(64)
	e, err := r.Next()
	require.NoError(t, err, "comments within the limit are skipped")
	assert.Equal(t, "soon", string(e.Data))
}
