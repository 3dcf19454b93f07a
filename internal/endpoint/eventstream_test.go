package endpoint

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// awsVector is a message of awslabs/aws-c-event-stream's deserializer
// tests (test_outgoing_application_one_compressed_header_pair_valid): one
// string header content-type: application/json and the payload
// {'foo':'bar'}, total 0x3d bytes, prelude CRC 0x07fd8396, message CRC
// 0x8d9c08b1. awsNoHeaders is its no-headers test's (0x1d bytes).
const (
	awsVector = "0000003d0000002007fd83960c" + "636f6e74656e742d74797065" + "07" + "0010" +
		"6170706c69636174696f6e2f6a736f6e" + "7b27666f6f273a27626172277d" + "8d9c08b1"
	awsNoHeaders = "0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// payloadPart is a SageMaker PayloadPart event carrying p.
func payloadPart(dst []byte, p string) []byte {
	return mock.AppendEventMessage(dst, [][2]string{{":event-type", "PayloadPart"}, {":content-type", "application/octet-stream"},
		{":message-type", "event"}}, []byte(p))
}

func TestEventStreamAWSVectors(t *testing.T) {
	vec := unhex(t, awsVector)
	// The mock's framing is AWS's, byte for byte.
	assert.Equal(t, vec, mock.AppendEventMessage(nil, [][2]string{{"content-type", "application/json"}}, []byte("{'foo':'bar'}")))
	assert.Equal(t, unhex(t, awsNoHeaders), mock.AppendEventMessage(nil, nil, []byte("{'foo':'bar'}")))

	var h eventHeaders
	require.NoError(t, parseEventHeaders(vec[12:12+0x20], &h))
	pp := payloadPart(nil, "x")
	require.NoError(t, parseEventHeaders(pp[12:12+binary.BigEndian.Uint32(pp[4:8])], &h))
	assert.Equal(t, []string{"event", "PayloadPart", "application/octet-stream"},
		[]string{string(h.messageType), string(h.eventType), string(h.contentType)})
	// Both messages check out, and carry no PayloadPart: nothing is read.
	for _, v := range []string{awsVector, awsNoHeaders} {
		b, err := io.ReadAll(newEventStream(bytes.NewReader(unhex(t, v))))
		require.NoError(t, err)
		assert.Empty(t, b)
	}
}

func TestEventStreamSplitReads(t *testing.T) {
	want := "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n"
	var stream []byte
	for i := 0; i < len(want); i += 5 { // messages that cut lines anywhere
		stream = payloadPart(stream, want[i:min(i+5, len(want))])
	}
	stream = mock.AppendEventMessage(stream, [][2]string{{":event-type", "SomethingElse"}, {":message-type", "event"}}, []byte("skipped"))
	for name, r := range map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader, "half": iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := io.ReadAll(iotest.OneByteReader(newEventStream(r(bytes.NewReader(stream)))))
			require.NoError(t, err)
			assert.Equal(t, want, string(got))
		})
	}
}

// A JSON-wrapped PayloadPart ({"Bytes": base64}) is delivered decoded, its
// escaped slashes ("\/", which some JSON encoders write) unescaped.
func TestEventStreamJSONWrapped(t *testing.T) {
	enc := base64.StdEncoding.EncodeToString([]byte("data: ???\n\n"))
	require.Contains(t, enc, "/")
	part := func(enc string) []byte {
		return mock.AppendEventMessage(nil, [][2]string{{":event-type", "PayloadPart"}, {":content-type", "application/json"},
			{":message-type", "event"}}, []byte(`{"Bytes": "`+enc+`"}`))
	}
	msgs := append(part(strings.ReplaceAll(enc, "/", `\/`)), part(enc)...)
	got, err := io.ReadAll(newEventStream(bytes.NewReader(msgs)))
	require.NoError(t, err)
	assert.Equal(t, "data: ???\n\ndata: ???\n\n", string(got))
}

func TestEventStreamFailures(t *testing.T) {
	good := payloadPart(nil, "data: x\n\n")
	badPrelude := bytes.Clone(good)
	badPrelude[9] ^= 1
	badMessage := bytes.Clone(good)
	badMessage[len(badMessage)-6] ^= 1
	huge := prelude(MaxEventStreamMessage+1, 0)
	exception := mock.AppendEventMessage(bytes.Clone(good), [][2]string{{":message-type", "exception"}, {":exception-type", "ModelStreamError"},
		{":content-type", "application/json"}}, []byte(`{"Message":"the model crashed","ErrorCode":"ModelError"}`))
	errorEvent := mock.AppendEventMessage(nil, [][2]string{{":message-type", "error"}, {":error-code", "InternalStreamFailure"},
		{":error-message", "stream broke"}}, nil)
	for name, c := range map[string]struct {
		in   []byte
		want string
	}{
		"prelude crc":  {badPrelude, "prelude CRC"},
		"message crc":  {badMessage, "a message's CRC"},
		"oversized":    {huge, "16 MiB"},
		"truncated":    {good[:len(good)-3], "ended inside a message"},
		"exception":    {exception, "ModelStreamError: the model crashed (ModelError)"},
		"error":        {errorEvent, "error InternalStreamFailure: stream broke"},
		"inconsistent": {prelude(16, 1), "lengths are inconsistent (total 16 bytes, headers 1 bytes)"},
		"short":        {mock.AppendEventMessage(nil, nil, nil)[:12], "ended inside a message"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := io.ReadAll(newEventStream(bytes.NewReader(c.in)))
			require.Error(t, err)
			assert.True(t, errors.Is(err, errEventStream), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// prelude is a message prelude of total and headers lengths, its CRC right.
func prelude(total, headers uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, total)
	b = binary.BigEndian.AppendUint32(b, headers)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// A prelude that claims a message of 16 MiB on a stream that sends no more
// holds no 16 MiB: the buffer grows as bytes arrive.
func TestEventStreamGrowsAsBytesArrive(t *testing.T) {
	e := newEventStream(bytes.NewReader(prelude(MaxEventStreamMessage, 0)))
	_, err := io.ReadAll(e)
	require.ErrorContains(t, err, "ended inside a message")
	assert.Equal(t, eventBuffer, cap(e.buf))
	big := payloadPart(nil, strings.Repeat("x", 100_000))
	got, err := io.ReadAll(newEventStream(iotest.OneByteReader(bytes.NewReader(big))))
	require.NoError(t, err)
	assert.Len(t, got, 100_000, "a message larger than the first buffer, read a byte at a time")
}

// sageMakerServer streams body (SSE text) as SageMaker does: PayloadPart
// messages of a few bytes each, flushed one by one; it records the last
// request's headers.
func sageMakerServer(t testing.TB, body string, extra []byte) (*httptest.Server, *atomic.Pointer[http.Header]) {
	var frames [][]byte
	for i := 0; i < len(body); i += 23 {
		frames = append(frames, payloadPart(nil, body[i:min(i+23, len(body))]))
	}
	if extra != nil {
		frames = append(frames, extra)
	}
	var seen atomic.Pointer[http.Header]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := r.Header.Clone()
		seen.Store(&h)
		w.Header().Set("Content-Type", EventStreamType)
		w.Header().Set("X-Amzn-SageMaker-Content-Type", "text/event-stream")
		for _, f := range frames {
			_, _ = w.Write(f)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func sseChunks(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,"+
			"\"delta\":{\"content\":\" tok%d\"},\"finish_reason\":null}]}\n\n", i)
	}
	return b.String() + usage + done
}

func TestClientSageMakerStream(t *testing.T) {
	srv, last := sageMakerServer(t, sseChunks(5), nil)
	c := New(Options{SageMaker: &SageMaker{TargetModel: "tm", InferenceComponent: "ic-1", TargetVariant: "v1"}})
	defer c.Close()
	req := chatReq(srv.URL+"/endpoints/ep/invocations-response-stream", true)
	req.RequestID = "req-1"
	res := c.Do(context.Background(), req)
	require.Nil(t, res.Err)
	texts, _ := outputs(res.Chunks)
	assert.Equal(t, []string{" tok0", " tok1", " tok2", " tok3", " tok4"}, texts)
	for i := 1; i < len(res.Chunks); i++ {
		assert.GreaterOrEqual(t, res.Chunks[i].At, res.Chunks[i-1].At)
	}
	seen := *last.Load()
	assert.Equal(t, "req-1", seen.Get("X-Amzn-SageMaker-Inference-Id"))
	assert.Equal(t, "ic-1", seen.Get("X-Amzn-SageMaker-Inference-Component"))
	assert.Equal(t, "v1", seen.Get("X-Amzn-SageMaker-Target-Variant"))
	assert.Equal(t, "application/json", seen.Get("X-Amzn-SageMaker-Accept"))
	assert.Empty(t, seen.Get("Accept"), "the streaming operation's Accept is X-Amzn-SageMaker-Accept")
	assert.Empty(t, seen.Get("X-Amzn-SageMaker-Target-Model"), "InvokeEndpointWithResponseStream has no TargetModel")

	// Non-streaming requests name their Accept Accept, and send the target model.
	c.Do(context.Background(), chatReq(srv.URL+"/endpoints/ep/invocations", false))
	seen = *last.Load()
	assert.Equal(t, "application/json", seen.Get("Accept"))
	assert.Equal(t, "tm", seen.Get("X-Amzn-SageMaker-Target-Model"))
}

func TestClientSageMakerStreamException(t *testing.T) {
	exc := mock.AppendEventMessage(nil, [][2]string{{":message-type", "exception"}, {":exception-type", "ModelStreamError"}},
		[]byte(`{"Message":"container died"}`))
	body := sseChunks(3)
	srv, _ := sageMakerServer(t, body[:len(body)-len(usage)-len(done)], exc)
	c := New(Options{})
	defer c.Close()
	res := c.Do(context.Background(), chatReq(srv.URL, true))
	require.NotNil(t, res.Err)
	assert.Contains(t, res.Err.Message, "ModelStreamError: container died")
	assert.Len(t, res.Chunks, 3, "the chunks before the exception were read")
}

// BenchmarkClientStreamEventStream is BenchmarkClientStream through
// SageMaker's event stream: each SSE chunk in its own PayloadPart.
func BenchmarkClientStreamEventStream(b *testing.B) {
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			srv, _ := sageMakerServer(b, sseChunks(benchTokens), nil)
			c := New(Options{MaxConns: conc, SageMaker: &SageMaker{}})
			defer c.Close()
			req := chatReq(srv.URL+"/endpoints/ep/invocations-response-stream", true)
			req.MaxTokens = benchTokens
			benchDo(b, c, conc, req)
		})
	}
}

// A message longer than the decoder's first buffer grows it, and a
// shorter one after it reuses it.
func TestEventStreamLongMessage(t *testing.T) {
	long := strings.Repeat("data: x\n\n", 600)
	stream := payloadPart(payloadPart(payloadPart(nil, "a"), long), "b")
	got, err := io.ReadAll(iotest.HalfReader(newEventStream(bytes.NewReader(stream))))
	require.NoError(t, err)
	assert.Equal(t, "a"+long+"b", string(got))
}

func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/vnd.amazon.eventstream": true, "Application/VND.Amazon.EventStream; charset=x": true,
		"application/vnd.amazon.eventstream ;x=1": true, "application/vnd.amazon.eventstreams": false,
		"text/event-stream": false, "": false,
	} {
		assert.Equal(t, want, isEventStream(http.Header{"Content-Type": {ct}}), ct)
	}
}
