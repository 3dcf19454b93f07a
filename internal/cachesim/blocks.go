package cachesim

import (
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/kvcache"
)

// prompt is a request's prompt as the cache sees it: its full blocks'
// names, and the sequence that names them, to be continued by the reply.
type prompt struct {
	seq   *kvcache.Sequence
	names []uint64
	isl   int
	tail  uint64 // what the tokens after the last full block are
}

// prompt names row's full prompt blocks.
func (s *Simulator) prompt(row dataset.TraceRow) prompt {
	b := s.cfg.CacheBlockSize
	full := row.InputLength / b
	seq := kvcache.NewSequence(s.seed, 1, (row.InputLength+row.OutputLength)/b)
	for j := range full {
		seq.Add(s.content(row, j*b, (j+1)*b))
	}
	names := seq.Hashes()
	return prompt{seq: seq, names: names[:len(names):len(names)], isl: row.InputLength,
		tail: s.content(row, full*b, row.InputLength)}
}

// withReply is p's names followed by those of the blocks its reply of osl
// tokens fills, the first of them holding the prompt's partial block. A
// reply is the same tokens for the same prompt (the mock's token k is
// always the same word), so a block of it is named by the prompt's tail
// and where in the reply it starts.
func (s *Simulator) withReply(p prompt, osl int) []uint64 {
	b := s.cfg.CacheBlockSize
	for j := p.isl / b; j < (p.isl+osl)/b; j++ {
		p.seq.Add(kvcache.Mix(p.tail ^ kvcache.Mix(uint64(int64(j*b-p.isl)))))
	}
	return p.seq.Hashes()
}

// content is a word standing for the prompt tokens [lo, hi) of row: the
// hash ids covering them and where they start and end in those ids'
// blocks; and for tokens past the hash ids, the row itself (its own
// fresh text).
func (s *Simulator) content(row dataset.TraceRow, lo, hi int) uint64 {
	t := s.cfg.HashBlockSize
	h := kvcache.Mix(uint64(lo%t)<<32 | uint64(hi-lo))
	if hi <= lo {
		return h
	}
	ids := row.HashIDs
	for k := lo / t; k <= (hi-1)/t && k < len(ids); k++ {
		h = kvcache.Mix(h ^ uint64(ids[k]))
	}
	if hi > len(ids)*t {
		h = kvcache.Mix(h ^ (uint64(row.Line)<<1 | 1))
	}
	return h
}
