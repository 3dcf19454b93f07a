// Package plotserver is `aiperf plot --dashboard`: a local web page of
// the figures, AIPerf's dashboard mode without its widgets. The page lists
// every figure (its notes above), each drawn as SVG when the browser asks
// for it, in the light or dark theme (?theme=dark); reloading the page
// reads the runs again, so a run still writing its files shows its new
// requests.
package plotserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/plot"
)

// Source reads the figures to show, with notes on what was left out.
type Source func() ([]plot.Figure, []string, error)

// Server serves the figures of a source.
type Server struct {
	src   Source
	theme plot.Theme
	w, h  int

	mu    sync.Mutex
	figs  []plot.Figure // of the last page load
	ready bool
}

// New is a server of src's figures, w×h pixels, in theme unless a page
// asks for the other.
func New(src Source, theme plot.Theme, w, h int) *Server {
	return &Server{src: src, theme: theme, w: w, h: h}
}

// Handler routes / (the page) and /figure/NAME.svg (a figure).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /figure/", s.figure)
	return mux
}

// load reads the source again.
func (s *Server) load() ([]plot.Figure, []string, error) {
	figs, notes, err := s.src()
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	s.figs, s.ready = figs, true
	s.mu.Unlock()
	return figs, notes, nil
}

// themeOf is the theme a request asks for (?theme=), else the server's.
func (s *Server) themeOf(r *http.Request) plot.Theme {
	if t, err := plot.ParseTheme(r.URL.Query().Get("theme")); err == nil && r.URL.Query().Has("theme") {
		return t
	}
	return s.theme
}

// figurePath is a figure's URL path under figure/: each segment of its
// name escaped.
func figurePath(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"path": figurePath}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>aiperf plot</title>
<style>
body { font-family: sans-serif; margin: 1.5em; background: {{.Background}}; color: {{.Text}}; }
figure { margin: 0 0 2em 0; } img { max-width: 100%; }
a { color: inherit; } .notes { opacity: 0.8; }
</style></head><body>
<h1>aiperf plot</h1>
<p>{{len .Figures}} figures, read when this page loaded (reload to read the runs again) ·
<a href="?theme={{.Other}}">{{.Other}} theme</a></p>
{{if .Notes}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<nav><ul>{{range .Figures}}<li><a href="#{{.Name}}">{{.Name}}</a>: {{.Title}}</li>{{end}}</ul></nav>
{{range .Figures}}<figure id="{{.Name}}"><img src="figure/{{path .Name}}.svg?theme={{$.Theme}}" alt="{{.Title}}" loading="lazy">
<figcaption>{{.Name}}</figcaption></figure>
{{end}}</body></html>
`))

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	figs, notes, err := s.load()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	theme := s.themeOf(r)
	data := struct {
		Figures          []plot.Figure
		Notes            []string
		Theme, Other     plot.Theme
		Background, Text string
	}{Figures: figs, Notes: notes, Theme: theme, Other: plot.Dark, Background: "#ffffff", Text: "#000000"}
	if theme == plot.Dark {
		data.Other, data.Background, data.Text = plot.Light, "#1a1a1a", "#e0e0e0"
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, plot.Markup(buf.String())) // a name's control characters shown escaped, as in the figures
}

// figure draws one figure of the last page load (loading first if no page
// was).
func (s *Server) figure(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/figure/"), ".svg")
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	figs, ready := s.figs, s.ready
	s.mu.Unlock()
	if !ready {
		var err error
		if figs, _, err = s.load(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	for _, f := range figs {
		if f.Name != name {
			continue
		}
		f.Theme = s.themeOf(r)
		var buf bytes.Buffer
		if err := f.Encode(&buf, "svg", s.w, s.h); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write(buf.Bytes())
		return
	}
	http.NotFound(w, r)
}

// Serve listens on addr (host:port; port 0 picks one), calls listening
// with the page's URL once it does, and serves until ctx is done.
func (s *Server) Serve(ctx context.Context, addr string, listening func(url string)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("dashboard: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	listening("http://" + l.Addr().String() + "/")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("dashboard: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("dashboard: stop: %w", err)
	}
	return nil
}
