package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceLine is one request of the Mooncake trace.
type traceLine struct {
	InputLength int   `json:"input_length"`
	HashIDs     []int `json:"hash_ids"`
}

// traceText is the text of the traceBlockSize tokens a trace hash id stands
// for: 4 random letters a token (the mock without a tokenizer counts one
// token per 4 bytes, and names each by its 4 bytes), drawn from a generator
// seeded by the id, so equal ids are equal blocks and different ids differ.
func traceText(id int) []byte {
	r := rand.New(rand.NewPCG(uint64(id), 0x4d6f6f6e))
	out := make([]byte, 4*traceBlockSize)
	for i := range out {
		out[i] = byte('a' + r.IntN(26))
	}
	return out
}

const traceBlockSize = 512

// The first 200 requests of the Mooncake conversation trace, replayed in
// order with an unbounded cache: the mock's prefix-cache hit ratio
// (hits_total / queries_total) is within 5% of the ratio the trace's hash_ids
// imply, and equal to the exact figure for whole blocks. Each hash id is a
// fixed block of 512 tokens of text, the last block cut to input_length;
// the mock runs without a tokenizer, so block boundaries are exact (a real
// BPE tokenizer re-tokenizing concatenated blocks would merge across their
// boundaries) and 2.8 million tokens are not put through a slow BPE.
func TestMooncakeTraceHitRatio(t *testing.T) {
	f, err := os.Open("testdata/mooncake_conversation_head200.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var lines []traceLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l traceLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		require.Len(t, l.HashIDs, (l.InputLength+traceBlockSize-1)/traceBlockSize, "one hash id per block")
		lines = append(lines, l)
	}
	require.NoError(t, sc.Err())
	require.Len(t, lines, 200)

	// What the hash ids imply: each request's leading ids already seen,
	// times the block size, over its input length.
	seen := map[int]bool{}
	var implied, wholeBlocks, queries float64
	for _, l := range lines {
		k := 0
		for k < len(l.HashIDs) && seen[l.HashIDs[k]] {
			k++
		}
		implied += float64(min(k*traceBlockSize, l.InputLength))
		wholeBlocks += float64(min(k, l.InputLength/traceBlockSize) * traceBlockSize)
		queries += float64(l.InputLength)
		for _, id := range l.HashIDs {
			seen[id] = true
		}
	}

	_, base := start(t, Config{Fast: true, BlockSize: traceBlockSize})
	blocks := map[int][]byte{} // each hash id's block of text
	for _, l := range lines {
		body := []byte(`{"max_tokens":1,"prompt":"`)
		for i, id := range l.HashIDs {
			if blocks[id] == nil {
				blocks[id] = traceText(id)
			}
			b := blocks[id]
			b = b[:4*min(traceBlockSize, l.InputLength-i*traceBlockSize)] // the trailing block may be partial
			body = append(body, b...)
		}
		body = append(body, `"}`...)
		resp, err := http.Post(base+"/v1/completions", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		raw := readAll(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, raw)
		require.Contains(t, raw, `"prompt_tokens":`+strconv.Itoa(l.InputLength)+",")
	}
	fams := scrape(t, base+"/metrics")
	hits, asked := single(t, fams, "vllm:prefix_cache_hits_total"), single(t, fams, "vllm:prefix_cache_queries_total")
	require.Equal(t, queries, asked)
	ratio, want := hits/asked, implied/queries
	t.Logf("mock hit ratio %.5f (%.0f/%.0f tokens), implied by hash_ids %.5f", ratio, hits, asked, want)
	assert.InEpsilon(t, want, ratio, 0.05, "within 5%% of the trace's ratio")
	assert.Equal(t, wholeBlocks, hits, "exactly the trace's whole blocks (a partial block is never cached)")
}
