package starlark

// What a script shows: its print() lines and its error messages. Both go
// to the user's terminal, so both are kept from driving it (control
// characters escaped, as internal/termsafe escapes the rest of aiperf's
// output) and from showing a secret a profile of the script holds (its API
// key, secret header values, URL credentials and secret query parameters,
// redacted as internal/plan redacts them: a profile's fields are readable,
// base.api_key included). While the script loads, its print() lines are
// held until it ends, so that a line printed before the profile that holds
// its secret is redacted too. print() is bounded: MaxPrintLine a call,
// MaxPrintBytes in all.

import (
	"fmt"
	"os"
	"strings"
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
	holding  bool           // print() lines are held, not written
	held     []heldLine     // the lines held, each cut to what redact keeps
	heldB    int            // bytes held
}

// heldLine is a print() line held until the script has loaded: its text
// (cut a little past MaxPrintLine) and the length of the whole line.
type heldLine struct {
	text string
	size int
}

func newOutput(write func(string)) *output {
	if write == nil {
		write = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
	}
	return &output{write: write, secrets: map[string]bool{}, holding: true}
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
func (o *output) redact(s string) string { return o.redactCut(s, len(s)) }

// redactCut is redact of a line of size bytes of which s holds at least
// the first MaxPrintLine + utf8.UTFMax.
func (o *output) redactCut(s string, size int) string {
	cut := 0
	if size > MaxPrintLine {
		end := MaxPrintLine
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		cut, s = size-end, s[:end]+"…" // Redact drops a secret cut short before "…"
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

// print writes one print() line (holds it while the script loads), or
// counts it as left out once MaxPrintBytes are written or held or the
// profiles hold too many secrets.
func (o *output) print(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.holding {
		o.emit(msg, len(msg))
		return
	}
	if o.heldB >= MaxPrintBytes {
		o.leaveOut(len(msg))
		return
	}
	keep := msg[:min(len(msg), MaxPrintLine+utf8.UTFMax)]
	o.held = append(o.held, heldLine{text: strings.Clone(keep), size: len(msg)})
	o.heldB += len(keep) + 1 // as written, with its newline: a million empty lines are bounded too
}

// emit writes a line of size bytes (text holds at least its first
// MaxPrintLine + utf8.UTFMax), or counts it as left out. Called with mu
// held.
func (o *output) emit(text string, size int) {
	if o.written >= MaxPrintBytes || len(o.list) > maxSecrets {
		o.leaveOut(size)
		return
	}
	line := o.redactCut(text, size)
	if o.written += len(line) + 1; o.written > MaxPrintBytes {
		o.written = MaxPrintBytes
		o.leaveOut(size)
		o.write(fmt.Sprintf("print: the script has printed %d bytes, the most it may; the rest is left out", MaxPrintBytes))
		return
	}
	o.write(line)
}

// leaveOut counts a line of size bytes as left out. Called with mu held.
func (o *output) leaveOut(size int) {
	o.left++
	o.leftB = add(o.leftB, size+1)
}

// flush writes the lines held while the script loaded, redacted with
// every secret its profiles hold, and says how much print() left out, if
// anything; later lines (a search planner's) are written as printed.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.holding = false
	held := o.held
	o.held, o.heldB = nil, 0
	for _, h := range held {
		o.emit(h.text, h.size)
	}
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
