package mock

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf-go/aiperf/internal/kvcache"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// Server is the mock inference server. It is safe for concurrent use.
type Server struct {
	cfg        Config
	model      latencyModel
	adminDelay time.Duration
	start      time.Time // monotonic origin of event times
	tokens     *tokenSource
	videos     videoJobs  // video_generation jobs (videos.go)
	mm         mmCache    // image uuids' tokens (mmcache.go)
	wordIDs    [][]uint32 // each output word's token ids; nil without EncodeTokens
	blockSize  int
	blockSeed  maphash.Seed
	cache      *kvcache.Cache
	sched      *scheduler
	metrics    *engineMetrics
	timing     atomic.Pointer[timingStats]
	kvHeld     atomic.Int64 // KV-cache tokens held by running requests
	kvCapacity int64        // KV-cache tokens
	hostname   string
	energy     gpuMeter // the synthetic GPUs' energy counter (--gpu-metrics)
	handler    http.Handler
	// active counts the requests being served, grace is how long they may
	// finish once serving stops, and notes (nil: none) hears what the
	// stop waits for and cuts (shutdown.go).
	active atomic.Int64
	grace  time.Duration
	notes  io.Writer
	nextID atomic.Uint64
	// bodyTimeout bounds reading a request's body (bodyReadTimeout).
	bodyTimeout time.Duration

	rngMu    sync.Mutex
	rng      *rand.Rand // --error-rate and unbounded lengths
	trialRng *rand.Rand // --trial-jitter-cv's scales

	trialMu sync.Mutex
	scale   float64 // the latency scale of the trial in progress
	trials  int     // trials begun

	ctl controlLog
}

// New validates cfg and builds a server; errors name the offending flag. The
// zero Config is valid: 127.0.0.1 on a random port, no latency, model
// "mock-model", no auth, no faults, blocks of 16 tokens.
func New(cfg Config) (*Server, error) {
	if cfg.BlockSize == 0 {
		cfg.BlockSize = defaultBlockSize
	}
	if cfg.MaxModelLen == 0 {
		cfg.MaxModelLen = defaultMaxModelLen
	}
	if cfg.FirstChunkTokens == 0 {
		cfg.FirstChunkTokens = 1
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Model == "" {
		cfg.Model = defaultModel
	}
	if cfg.Host == "" {
		cfg.Host = defaultHost
	}
	s := &Server{
		cfg:        cfg,
		adminDelay: msDuration(cfg.AdminLatencyMS),
		start:      time.Now(),
		tokens:     newTokenSource(cfg.EncodeTokens, cfg.CountTokens),
		blockSize:  cfg.BlockSize,
		blockSeed:  maphash.MakeSeed(),
		cache:      kvcache.New(cfg.cacheBlocks()),
		sched:      &scheduler{limit: cfg.MaxNumSeqs},
		metrics:    newEngineMetrics(),
		kvCapacity: int64(cfg.cacheBlocks() * cfg.BlockSize),
		hostname:   hostname(),
		rng:        rand.New(rand.NewPCG(uint64(cfg.RandomSeed), 0x6d6f636b)),
		trialRng:   rand.New(rand.NewPCG(uint64(cfg.RandomSeed), 0x747269616c)),
		model:      cfg.model(),
	}
	if s.tokens.real() {
		s.wordIDs = make([][]uint32, len(words))
		for i, w := range words {
			s.wordIDs[i] = s.tokens.ids(w)
		}
	}
	s.newTrial()
	s.clearTiming()
	if s.paced() {
		sharedClock() // started now rather than on the first request
	}
	s.ctl.maxEvents = maxEvents
	s.bodyTimeout = bodyReadTimeout
	s.handler = s.boundBodyRead(s.routes())
	if cfg.AccessLogs {
		out := cfg.AccessLog
		if out == nil {
			out = os.Stderr
		}
		s.handler = logRequests(log.New(out, "", log.LstdFlags|log.Lmicroseconds), s.handler)
	}
	s.handler = s.countActive(s.handler)
	s.grace = shutdownGrace
	return s, nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", postOnly(s.inference(chatEndpoint)))
	mux.HandleFunc("/v1/completions", postOnly(s.inference(completionsEndpoint)))
	mux.HandleFunc("/v1/responses", postOnly(s.inference(responsesEndpoint)))
	mux.HandleFunc("/v1/messages", postOnly(s.inference(messagesEndpoint)))
	mux.HandleFunc("/generate", postOnly(s.inference(tgiEndpoint)))
	mux.HandleFunc("/generate_stream", postOnly(s.inference(tgiStreamEndpoint)))
	mux.HandleFunc("/v1/embeddings", postOnly(s.encoder(apiEmbeddings)))
	mux.HandleFunc("/v1/ranking", postOnly(s.encoder(apiNIMRankings)))
	mux.HandleFunc("/rerank", postOnly(s.encoder(apiTEIRankings)))
	mux.HandleFunc("/v2/rerank", postOnly(s.encoder(apiCohereRankings)))
	mux.HandleFunc("/v1/images/generations", postOnly(s.images(false)))
	mux.HandleFunc("/v1/images/edits", postOnly(s.images(true)))
	mux.HandleFunc("/v1/videos", postOnly(s.submitVideo))
	mux.HandleFunc("/v1/infer", postOnly(s.retrieve))
	mux.HandleFunc("/rag/api/prompt", postOnly(s.solido))
	mux.HandleFunc("/v1/audio/transcriptions", postOnly(s.transcribe))
	s.sageMakerRoutes(mux)
	mux.HandleFunc("GET /v1/videos/{id}", s.videoStatus(false))
	mux.HandleFunc("GET /v1/videos/{id}/content", s.videoStatus(true))
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for path, route := range s.adminRoutes() {
		mux.HandleFunc(path, s.admin(route))
	}
	mux.HandleFunc("GET /slots", s.listSlots)
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	if s.cfg.GPUMetrics {
		mux.HandleFunc("GET /dcgm/metrics", s.serveDCGM)
	}
	mux.HandleFunc("GET /mock/control", s.controlState)
	mux.HandleFunc("POST /mock/control/clear", s.clearControl)
	mux.HandleFunc("GET /mock/timing", s.timingState)
	mux.HandleFunc("POST /mock/timing/clear", s.clearTimingRoute)
	return mux
}

// Handler returns the server's HTTP handler (access logging included when
// --access-logs is set).
func (s *Server) Handler() http.Handler { return s.handler }

// models answers GET /v1/models in OpenAI's list shape.
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{ID: s.cfg.Model, Object: "model", Created: s.start.Unix(), OwnedBy: "aiperf-mock"}}})
}

// writeJSON answers status with v as a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimSuffix(body.Bytes(), []byte("\n")))
}

// writeError answers status with an OpenAI-shaped error body.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	type apiError struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	}
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: typ, Code: status}})
}

// writeText answers 200 with a plain-text body.
func writeText(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, body)
}

// logRequests writes one access-log line per request: method, path, status
// and duration. The path is the client's, still percent-encoded as sent
// (EscapedPath) and escaped by termsafe, so no control byte, line break
// or space of a decoded path reaches the terminal or forges a line.
func logRequests(logger *log.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		logger.Printf("%s %s %d %s", termsafe.Text(r.Method), termsafe.Text(r.URL.EscapedPath()), sw.status, time.Since(began).Round(time.Microsecond))
	})
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap exposes the underlying writer to http.ResponseController, through
// which the streaming handlers flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyReadTimeout bounds how long a client may take to send a request's
// body, as ReadHeaderTimeout bounds its headers: a client that trickles its
// body is cut instead of holding a connection and a handler for ever.
const bodyReadTimeout = 30 * time.Second

// boundBodyRead gives each request with a body s.bodyTimeout to send it.
// The deadline is lifted once the body is read to its end, so that a long
// reply (and net/http's watch for the client leaving) is not cut by it.
func (s *Server) boundBodyRead(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts its connection's read deadline when the body ends.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted { // after a timeout the deadline stays: net/http's discard of the rest must not wait
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
