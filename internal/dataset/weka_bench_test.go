package dataset

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkWekaParse parses a Weka trace file of 200 calls, each with
// 1,500 hash ids (a 96,000-token context at 64 tokens a block): 1.65 MB.
func BenchmarkWekaParse(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"id": "t", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "tool_tokens": 0, "system_tokens": 0, "requests": [`)
	for i := range 200 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "\n{\"t\": %d.5, \"type\": \"n\", \"model\": \"m\", \"in\": %d, \"out\": 100, \"hash_ids\": [", i, 1500*64)
		for k := range 1500 {
			if k > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "%d", k+i)
		}
		sb.WriteString(`], "input_types": ["text"], "output_types": ["text"], "stop": "end_turn", "api_time": 1.5, "think_time": 0.2}`)
	}
	sb.WriteString("]}\n")
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ps, _ := parseWeka(context.Background(), data); ps != nil {
			b.Fatal(ps[0].p.Msg)
		}
	}
}
