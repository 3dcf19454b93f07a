package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// minimalResult is what the minimal client keeps of one request.
type minimalResult struct {
	ttft time.Duration
	itls []time.Duration
	osl  int
}

// minimalChunk is the part of a chat chunk the minimal client decodes.
type minimalChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// runMinimal is the -role minimal process of the pinned measurement: the
// hand-written baseline a load generator is held to. c goroutines send n
// streaming chat requests in all over net/http (an idle pool of c, every
// other setting the default), read each reply with a 16 KiB bufio.Reader,
// stamp every data line when read, json.Unmarshal it, and keep TTFT, the
// ITLs and the usage's output length of every request. It prints the mean
// TTFT and the ITL quantiles.
func runMinimal(url string, c, n int) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, ReadBufferSize: minimalReadBuffer}}
	body, err := json.Marshal(map[string]any{
		"model":          "mock-model",
		"messages":       []map[string]string{{"role": "user", "content": strings.Repeat("lorem ipsum ", 32)}},
		"max_tokens":     neutralTokens,
		"stream":         true,
		"stream_options": map[string]bool{"include_usage": true},
	})
	if err != nil {
		return err
	}
	results := make([]minimalResult, n)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			br := bufio.NewReaderSize(nil, 16<<10)
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				r, err := minimalRequest(client, url+"/v1/chat/completions", body, br, i)
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				results[i] = r
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	var ttft time.Duration
	var itls []float64
	for _, r := range results {
		if r.osl != neutralTokens || len(r.itls) != neutralTokens-1 {
			return fmt.Errorf("a reply had %d output tokens and %d ITLs, want %d and %d", r.osl, len(r.itls), neutralTokens, neutralTokens-1)
		}
		ttft += r.ttft
		for _, d := range r.itls {
			itls = append(itls, float64(d.Microseconds()))
		}
	}
	slices.Sort(itls)
	q := func(p float64) float64 { return itls[int(p*float64(len(itls)-1))] }
	fmt.Printf("%d requests, mean TTFT %v, ITL µs p10 %.0f p25 %.0f p50 %.0f p75 %.0f p90 %.0f\n", n, ttft/time.Duration(n),
		q(0.10), q(0.25), q(0.5), q(0.75), q(0.9))
	return nil
}

// Variations of the minimal client (-role minimal flags), to tell causes
// apart: minimalDecode false skips the JSON decoding of each chunk (a
// client that does less work per chunk), minimalReadBuffer sets the
// transport's ReadBufferSize (0: net/http's default, 4 KiB).
var (
	minimalDecode     = true
	minimalReadBuffer int
	// minimalHeaders adds the headers aiperf sends beyond the minimal
	// client's (Accept, X-Request-Id, X-Correlation-Id, X-Session-Affinity,
	// its User-Agent).
	minimalHeaders bool
)

// minimalRequest sends one request and reads its stream.
func minimalRequest(client *http.Client, url string, body []byte, br *bufio.Reader, i int64) (minimalResult, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return minimalResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if minimalHeaders {
		req.Header.Set("User-Agent", "aiperf/bench")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("X-Request-Id", fmt.Sprintf("0123abcd-%06d", i))
		req.Header.Set("X-Correlation-Id", fmt.Sprintf("0123abcd-s%06d", i))
		req.Header.Set("X-Session-Affinity", fmt.Sprintf("0123abcd-s%06d", i))
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return minimalResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return minimalResult{}, fmt.Errorf("status %s", resp.Status)
	}
	br.Reset(resp.Body)
	var stamps []time.Time
	var r minimalResult
	for {
		line, err := br.ReadSlice('\n')
		at := time.Now()
		if err != nil {
			return r, fmt.Errorf("stream ended before [DONE]: %w", err)
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		var ch minimalChunk
		if !minimalDecode {
			if bytes.Contains(data, []byte(`"content":"`)) && !bytes.Contains(data, []byte(`"content":""`)) {
				stamps = append(stamps, at)
			}
			if bytes.Contains(data, []byte(`"usage"`)) {
				r.osl = neutralTokens
			}
			continue
		}
		if err := json.Unmarshal(data, &ch); err != nil {
			return r, fmt.Errorf("decode chunk: %w", err)
		}
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			stamps = append(stamps, at)
		}
		if ch.Usage != nil {
			r.osl = ch.Usage.CompletionTokens
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if len(stamps) == 0 {
		return r, fmt.Errorf("no content chunk")
	}
	r.ttft = stamps[0].Sub(sent)
	for i := 1; i < len(stamps); i++ {
		r.itls = append(r.itls, stamps[i].Sub(stamps[i-1]))
	}
	return r, nil
}
