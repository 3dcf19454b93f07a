package plan

import (
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The standard log package is written to by Go's net/http on its own, past
// every Redactor the program holds: an answer a server sends on a
// connection that sent no request ("Unsolicited response received on idle
// HTTP channel starting with ..."), quoted from the server's bytes, which
// may echo a request's credentials. Every secret a Redactor of this
// process was made with is kept for that log (remembered), whatever made
// the Redactor: a profile, an integration's environment, a plot upload.
var (
	rememberedMu sync.Mutex
	remembered   = map[string]bool{}
	logRedactor  atomic.Pointer[Redactor] // nil: to be made again
)

// remember keeps secrets for the standard log's writer.
func remember(secrets []string) {
	rememberedMu.Lock()
	defer rememberedMu.Unlock()
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s != "" && !remembered[s] {
			remembered[s] = true
			logRedactor.Store(nil)
		}
	}
}

// rememberedRedactor hides every remembered secret, every URL's userinfo
// and the values of secret query parameters.
func rememberedRedactor() *Redactor {
	if r := logRedactor.Load(); r != nil {
		return r
	}
	rememberedMu.Lock()
	defer rememberedMu.Unlock()
	if r := logRedactor.Load(); r != nil {
		return r
	}
	r := newRedactor(slices.Sorted(maps.Keys(remembered))...)
	r.urls = true
	logRedactor.Store(r)
	return r
}

// LogWriter is w for the standard log package (log.SetOutput): each line
// is redacted of every secret of every Redactor this process made, before
// the line or after LogWriter was called, of what it learnt (AddSecrets),
// of every URL's userinfo and of secret query parameters' values.
func LogWriter(w io.Writer) io.Writer { return logWriter{w} }

type logWriter struct{ w io.Writer }

func (lw logWriter) Write(p []byte) (int, error) {
	return redactWriter{r: rememberedRedactor(), w: lw.w}.Write(p)
}
