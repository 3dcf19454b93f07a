package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// runEndpoint is the -role endpoint process: the minimal client's loop
// around aiperf's HTTP client (endpoint.Client) alone, without the engine,
// the records or the exports, to tell the client's costs from the rest.
func runEndpoint(url string, c, n int) error {
	client := endpoint.New(endpoint.Options{MaxConns: c, RxCoalesce: plan.ClientIO{}.RxCoalesce()})
	defer client.Close()
	req := endpoint.Request{URL: url + "/v1/chat/completions", EndpointType: plan.EndpointChat, Model: "mock-model",
		Prompt: strings.Repeat("lorem ipsum ", 32), MaxTokens: neutralTokens, Streaming: true}
	body, err := endpoint.Body(req)
	if err != nil {
		return err
	}
	req.Body = body
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				res := client.Do(context.Background(), req)
				if res.Err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("%s: %s", res.Err.Type, res.Err.Message))
					return
				}
				if len(res.Chunks) != neutralTokens {
					failed.CompareAndSwap(nil, fmt.Errorf("%d chunks, want %d", len(res.Chunks), neutralTokens))
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	fmt.Printf("%d requests\n", n)
	return nil
}
