package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
)

// requestError is a refusal of a request with its HTTP status. Its message
// may be another server's verbatim (vLLM's start with a capital and end
// with a full stop).
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

// vllmError is a 400 refusal worded as vLLM words it.
func vllmError(msg string) error {
	return &requestError{status: http.StatusBadRequest, msg: msg}
}

// requestStatus is the HTTP status that refuses a request for err: a
// requestError's own, 413 for a body over maxRequestBytes, else 400.
func requestStatus(err error) int {
	var re *requestError
	if errors.As(err, &re) {
		return re.status
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// decodeBody decodes one JSON value from body into v and checks that
// nothing but white space follows it: a second value or trailing bytes
// make the body invalid, as they do for a JSON parser reading the whole
// body (vLLM's).
func decodeBody(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode request body: %w", err)
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
		return nil
	case err == nil:
		return errors.New("decode request body: unexpected data after the JSON value")
	default:
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fmt.Errorf("decode request body: %w", err)
		}
		return fmt.Errorf("decode request body: unexpected data after the JSON value: %w", err)
	}
}

// intParam is an integer request parameter read as pydantic reads an int
// field: a JSON integer, or a number with a zero fractional part (1e9,
// 16.0); a fractional number is refused.
type intParam int

func (p *intParam) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		*p = intParam(n)
		return nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange): // a string, a boolean, an array or an object
		return fmt.Errorf("input should be a valid integer, got %s", raw)
	case f != math.Trunc(f):
		return fmt.Errorf("input should be a valid integer, got a number with a fractional part: %s", raw)
	case f < math.MinInt64 || f >= math.MaxInt64 || math.IsInf(f, 0):
		return fmt.Errorf("input should be a valid integer, got %s, which is out of range", raw)
	}
	*p = intParam(f)
	return nil
}

// postOnly serves a route that takes POST alone, answering any other
// method 405 with an OpenAI-shaped error as the admin routes do.
func postOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeMethodNotAllowed(w, r)
			return
		}
		h(w, r)
	}
}

// checkLogprobs refuses a request for log probabilities (chat's logprobs
// true or top_logprobs above 0, completions' logprobs as any count): the
// mock computes none, and a reply without what was asked would differ
// from the real one in shape and size unnoticed.
func checkLogprobs(req *completionRequest) error {
	asked := bytes.TrimSpace(req.Logprobs)
	if len(asked) > 0 && !bytes.Equal(asked, []byte("null")) && !bytes.Equal(asked, []byte("false")) ||
		req.TopLogprobs != nil && *req.TopLogprobs > 0 {
		return errors.New("logprobs: the mock computes no log probabilities, so a request for them is refused rather than " +
			"answered with logprobs null; leave logprobs and top_logprobs out")
	}
	return nil
}
