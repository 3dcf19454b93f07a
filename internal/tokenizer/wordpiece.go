package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// wordPiece is the WordPiece model of BERT-family tokenizers: each
// pre-tokenized word is cut greedily into the longest vocabulary entries
// from its start, every piece but the first spelt with the continuing
// prefix (##); a word that cannot be cut so, or longer than maxChars
// characters, is the unknown token.
type wordPiece struct {
	vocab    *vocab
	prefix   string
	maxChars int
	unk      int32
}

func newWordPiece(m *hfModel) (*wordPiece, error) {
	var strs map[string]int
	if len(m.Vocab) == 0 {
		return nil, errors.New("model has no vocab")
	}
	if err := json.Unmarshal(m.Vocab, &strs); err != nil {
		return nil, fmt.Errorf("model vocab: %w", jsonError(err))
	}
	ids := make(map[string]int32, len(strs))
	for tok, id := range strs {
		if id < 0 || id >= noRank {
			return nil, fmt.Errorf("vocabulary id %d out of range [0, %d)", id, noRank)
		}
		ids[tok] = int32(id)
	}
	v, err := vocabOf(ids)
	if err != nil {
		return nil, fmt.Errorf("model vocab: %w", err)
	}
	w := &wordPiece{vocab: v, prefix: "##", maxChars: 100}
	if m.ContinuingSubwordPrefix != "" {
		w.prefix = m.ContinuingSubwordPrefix
	}
	if m.MaxInputCharsPerWord > 0 {
		w.maxChars = m.MaxInputCharsPerWord
	}
	unk := "[UNK]"
	if m.UnkToken != nil {
		unk = *m.UnkToken
	}
	id, ok := ids[unk]
	if !ok {
		return nil, fmt.Errorf("model unk_token %s is not in the vocabulary", brief(unk))
	}
	w.unk = id
	return w, nil
}

// encode appends the ids of one word. Its cost is bounded by maxChars², so
// counting stays linear in the text.
func (w *wordPiece) encode(word string, ids []int) []int {
	if utf8.RuneCountInString(word) > w.maxChars {
		return append(ids, int(w.unk))
	}
	start := len(ids)
	buf := make([]byte, 0, len(w.prefix)+len(word))
	for pos := 0; pos < len(word); {
		buf = buf[:0]
		if pos > 0 {
			buf = append(buf, w.prefix...)
		}
		head := len(buf)
		buf = append(buf, word[pos:]...)
		found := false
		for end := len(word); end > pos; {
			if id, ok := w.vocab.lookup(unsafe.String(unsafe.SliceData(buf), head+end-pos)); ok {
				ids = append(ids, int(id))
				pos, found = end, true
				break
			}
			_, n := utf8.DecodeLastRuneInString(word[pos:end])
			end -= n
		}
		if !found {
			return append(ids[:start], int(w.unk))
		}
	}
	return ids
}

// decode joins the words with spaces and the continuations to their word.
func (w *wordPiece) decode(ids []int, sb *strings.Builder) {
	for _, id := range ids {
		tok, ok := w.vocab.token(id)
		if !ok {
			continue
		}
		if s := string(tok); strings.HasPrefix(s, w.prefix) {
			sb.WriteString(s[len(w.prefix):])
		} else {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(s)
		}
	}
}
