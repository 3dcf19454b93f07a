package mock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// shutdownGrace is how long the requests in flight may finish once the
// serving context is cancelled (Ctrl-C) before their connections are
// closed.
const shutdownGrace = 5 * time.Second

// ListenAndServe listens on --host:--port, calls ready (if not nil) with the
// bound address once connections are accepted, and serves until ctx is
// cancelled; it then lets the requests in flight finish for up to
// shutdownGrace, cuts those still running, and returns nil. What it waits
// for and what it cut are said on the notes writer (Serve's).
func (s *Server) ListenAndServe(ctx context.Context, ready func(addr string)) error {
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("start mock server: %w", err)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-served:
		return fmt.Errorf("serve mock server: %w", err)
	case <-ctx.Done():
	}
	if n := s.active.Load(); n > 0 {
		s.note("stopping: waiting up to %v for %s in flight to finish, then cutting them", s.grace, requests(n))
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		cut := s.active.Load()
		_ = srv.Close()
		if cut > 0 {
			s.note("stopped: %s still in flight after %v cut", requests(cut), s.grace)
		}
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve mock server: %w", err)
	}
	return nil
}

// countActive counts the requests next is serving (Server.active).
func (s *Server) countActive(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Add(-1)
		next.ServeHTTP(w, r)
	})
}

// note writes one line on the notes writer, if any.
func (s *Server) note(format string, args ...any) {
	if s.notes != nil {
		fmt.Fprintf(s.notes, "aiperf-mock-server: "+format+"\n", args...)
	}
}

// requests is "1 request" or "N requests".
func requests(n int64) string {
	if n == 1 {
		return "1 request"
	}
	return strconv.FormatInt(n, 10) + " requests"
}
