package starlark

// What a script shows: its print() lines and its error messages. Both go
// to the user's terminal, so both are kept from driving it (control
// characters escaped, as internal/termsafe escapes the rest of aiperf's
// output) and from showing a secret a profile of the script holds (its API
// key, secret header values, URL credentials and secret query parameters,
// redacted as internal/plan redacts them: a profile's fields are readable,
// base.api_key included). print() is bounded: MaxPrintLine a call,
// MaxPrintBytes in all.

import (
	"fmt"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/termsafe"
	"go.starlark.net/starlark"
)

const (
	// MaxPrintBytes bounds what a script's print() calls write in all
	// (escapes included); the lines past it are left out, and counted.
	MaxPrintBytes = 1 << 20
	// MaxPrintLine bounds the text of one print() call (and of an error
	// message): the rest is cut, and counted.
	MaxPrintLine = 64 << 10
	// maxSecrets bounds the distinct secrets the script's profiles may
	// hold while print() still shows text: redacting costs each of them a
	// pass over every line.
	maxSecrets = 256
)

// outputKey is the thread-local key of the script's output.
const outputKey = "aiperf.output"

// output is the script's print() and the secrets its profiles hold. It
// is shared by the loader's thread and the search planners' threads.
type output struct {
	mu       sync.Mutex
	write    func(string)
	secrets  map[string]bool
	list     []string
	redactor *plan.Redactor // of list; nil: to be built
	written  int            // bytes written by print()
	left     int            // lines left out
	leftB    int            // bytes left out
}

func newOutput(write func(string)) *output {
	if write == nil {
		write = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
	}
	return &output{write: write, secrets: map[string]bool{}}
}

// addSecrets records the secrets of a profile the script built.
func addSecrets(th *starlark.Thread, p plan.Profile) {
	o, _ := th.Local(outputKey).(*output)
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range p.Secrets() {
		if s != "" && !o.secrets[s] {
			o.secrets[s] = true
			o.list = append(o.list, s)
			o.redactor = nil
		}
	}
}

// redact is s cut to MaxPrintLine, its secrets redacted and its control
// characters escaped (newlines and tabs kept). Called with mu held.
func (o *output) redact(s string) string {
	cut := 0
	if len(s) > MaxPrintLine {
		end := MaxPrintLine
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		cut, s = len(s)-end, s[:end]+"…" // Redact drops a secret cut short before "…"
	}
	if o.redactor == nil {
		o.redactor = plan.NewRedactor(o.list...)
	}
	s = o.redactor.Redact(s)
	s = termsafe.Lines(s)
	if cut > 0 {
		s += fmt.Sprintf(" [%d more bytes left out]", cut)
	}
	return s
}

// print writes one print() line, or counts it as left out once
// MaxPrintBytes are written or the profiles hold too many secrets.
func (o *output) print(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.written >= MaxPrintBytes || len(o.list) > maxSecrets {
		o.left++
		o.leftB = add(o.leftB, len(msg)+1)
		return
	}
	line := o.redact(msg)
	if o.written += len(line) + 1; o.written > MaxPrintBytes {
		o.written = MaxPrintBytes
		o.left++
		o.leftB = add(o.leftB, len(msg)+1)
		o.write(fmt.Sprintf("print: the script has printed %d bytes, the most it may; the rest is left out", MaxPrintBytes))
		return
	}
	o.write(line)
}

// flush says how much print() left out, if anything.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.left == 0:
		return
	case len(o.list) > maxSecrets:
		o.write(fmt.Sprintf("print: %d lines (%d bytes) left out: the script's profiles hold more than %d secrets, "+
			"too many to redact", o.left, o.leftB, maxSecrets))
	default:
		o.write(fmt.Sprintf("print: %d lines (%d bytes) left out past the %d bytes a script may print", o.left, o.leftB, MaxPrintBytes))
	}
	o.left, o.leftB = 0, 0
}

// redactError is err with the script's secrets redacted and its control
// characters escaped: the message of an *Error (cut to MaxPrintLine),
// or the whole text of another error.
func (o *output) redactError(err error) error {
	if err == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if se, ok := err.(*Error); ok {
		out := *se
		out.Msg = o.redact(se.Msg)
		return &out
	}
	msg := err.Error()
	if red := o.redact(msg); red != msg {
		return &redacted{msg: red, err: err}
	}
	return err
}

// redacted is an error whose message was redacted; errors.Is and
// errors.As still see the original.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
