package servermetrics

import (
	"context"
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// ProbeTimeout bounds the look for one default DCGM exporter.
const ProbeTimeout = 2 * time.Second

// ServingDCGM returns those of urls that answer a scrape with DCGM
// metrics (a family named DCGM_FI_…), in their order, looking at all of
// them at once within ProbeTimeout. It sends no header: the URLs are the
// default exporters, which the user did not name, so the server's
// credentials never go to them. A URL that does not answer, answers
// something else or is not a URL is left out, silently.
func ServingDCGM(ctx context.Context, urls []string) []string {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	ok := make([]bool, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			client := newClient(ProbeTimeout)
			defer client.CloseIdleConnections()
			f, err := fetch(ctx, client, u, nil, DefaultMaxSeries, maphash.MakeSeed())
			if err != nil {
				return
			}
			for _, fam := range f.fams {
				if strings.HasPrefix(fam.GetName(), "DCGM_FI_") {
					ok[i] = true
					return
				}
			}
		})
	}
	wg.Wait()
	var out []string
	for i, u := range urls {
		if ok[i] {
			out = append(out, u)
		}
	}
	return out
}
