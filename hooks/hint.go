package hooks

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// probe is a read-only route by which a server shows what it is, and the
// advice for a reset the default route did not find there.
type probe struct {
	path, advice string
}

// probes are tried in order on a server that answered 404 to the default
// reset route (the routes of AIPerf's "Control Hooks by Inference Server"
// page, ai-dynamo/aiperf, and of llama.cpp's tools/server). Only GETs that
// change nothing: SGLang's /flush_cache answers GET too, and would flush.
var probes = []probe{
	{"/slots", "it answers GET /slots as llama-server does: pass --server llamacpp, whose reset erases every slot " +
		"(llama-server needs --slot-save-path for that, and --cache-ram 0 for a reset that verifies)"},
	{"/server_info", "it answers GET /server_info as SGLang does: pass --server sglang (POST /flush_cache)"},
	{"/get_server_info", "it answers GET /get_server_info as SGLang does: pass --server sglang (POST /flush_cache)"},
	{"/version", "it answers GET /version as vLLM does: vLLM serves /reset_prefix_cache only when started with " +
		"VLLM_SERVER_DEV_MODE=1"},
}

// presetHint says which --server preset's routes origin answers, after a
// 404 on the default reset route; "" when none does. Each probe is bounded
// by timeout (a second at most: it only words an error).
func (c *Client) presetHint(ctx context.Context, origin string, timeout time.Duration) string {
	base := strings.TrimRight(origin, "/")
	for _, p := range probes {
		if c.answers(ctx, base+p.path, min(timeout, time.Second)) {
			return p.advice
		}
	}
	return ""
}

// answers reports whether a GET of rawURL gets a 2xx.
func (c *Client) answers(ctx context.Context, rawURL string, timeout time.Duration) bool {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, rawURL, http.NoBody)
	if err != nil {
		return false
	}
	resp, err := c.do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyRead))
	return resp.StatusCode >= 200 && resp.StatusCode <= 299
}
