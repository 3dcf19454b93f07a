package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// hfFile is the part of a Hugging Face tokenizer.json this package reads.
type hfFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
	Normalizer   *hfNormalizer   `json:"normalizer"`
	PreTokenizer *hfPreTokenizer `json:"pre_tokenizer"`
	Decoder      *hfDecoder      `json:"decoder"`
	Model        hfModel         `json:"model"`
}

type hfModel struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	ByteFallback            bool            `json:"byte_fallback"`
	ContinuingSubwordPrefix string          `json:"continuing_subword_prefix"`
	EndOfWordSuffix         string          `json:"end_of_word_suffix"`
	UnkToken                *string         `json:"unk_token"`
	FuseUnk                 bool            `json:"fuse_unk"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	MaxInputCharsPerWord    int             `json:"max_input_chars_per_word"`
}

// hfPattern is the pattern of a Split pre-tokenizer or Replace normalizer.
type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

type hfNormalizer struct {
	Type        string         `json:"type"`
	Normalizers []hfNormalizer `json:"normalizers"`
	// Replace, Prepend, Strip.
	Pattern    hfPattern `json:"pattern"`
	Content    string    `json:"content"`
	Prepend    string    `json:"prepend"`
	StripLeft  *bool     `json:"strip_left"`
	StripRight *bool     `json:"strip_right"`
	// BertNormalizer.
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
}

type hfPreTokenizer struct {
	Type          string           `json:"type"`
	Pretokenizers []hfPreTokenizer `json:"pretokenizers"`
	Pattern       hfPattern        `json:"pattern"`
	Behavior      string           `json:"behavior"`
	Invert        bool             `json:"invert"`
	// ByteLevel's, and Metaspace's before prepend_scheme.
	AddPrefixSpace *bool `json:"add_prefix_space"`
	UseRegex       *bool `json:"use_regex"`
	// Metaspace.
	Replacement   string `json:"replacement"`
	PrependScheme string `json:"prepend_scheme"`
	Split         *bool  `json:"split"`
}

type hfDecoder struct {
	Type     string      `json:"type"`
	Decoders []hfDecoder `json:"decoders"`
	// Strip.
	Content string `json:"content"`
	Start   int    `json:"start"`
	// Metaspace.
	PrependScheme  string `json:"prepend_scheme"`
	AddPrefixSpace *bool  `json:"add_prefix_space"`
}

// loadFile reads and adapts one tokenizer.json (gunzipping a .gz file). The
// tokenizer is named name, or the file's absolute path when name is empty.
func loadFile(path, name string) (Tokenizer, error) {
	data, err := readMaybeGzip(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	if name == "" {
		if name, err = filepath.Abs(path); err != nil {
			return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
		}
	}
	tok, err := parseHF(data, name)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
	}
	return tok, nil
}

// maxFileSize bounds a tokenizer.json, gunzipped or not; the largest
// published ones are under 100 MB.
var maxFileSize int64 = 256 << 20

// readMaybeGzip reads a regular file of at most maxFileSize bytes,
// gunzipping it if its name ends in .gz.
func readMaybeGzip(path string) ([]byte, error) {
	// Stat before opening: opening a FIFO would wait for a writer.
	tooLarge := fmt.Errorf("read %s: larger than %d MiB, too large for a tokenizer.json", path, maxFileSize>>20)
	switch fi, err := os.Stat(path); {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("read %s: not a regular file", path)
	case fi.Size() > maxFileSize:
		return nil, tooLarge
	}
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("gunzip %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	case int64(len(data)) > maxFileSize:
		return nil, tooLarge
	}
	return data, nil
}

// parseHF builds a tokenizer from the contents of a tokenizer.json: on the
// engine for byte-level BPE with one split pattern (GPT-2, Llama 3, Qwen),
// else as a pipeline of Hugging Face's stages.
func parseHF(data []byte, name string) (Tokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", jsonError(err))
	}
	m := &f.Model
	if m.Type == "" && len(m.Vocab) == 0 && len(m.Merges) == 0 {
		return nil, errors.New(`not a tokenizer.json: no "model" object`)
	}
	if m.Type == "" && len(m.Merges) > 0 {
		m.Type = "BPE" // tokenizer.json files from before model types were tagged
	}
	if m.Type == "BPE" && !m.ByteFallback && m.ContinuingSubwordPrefix == "" && m.EndOfWordSuffix == "" {
		pattern, perr := splitPattern(f.PreTokenizer)
		forms, nerr := normForms(f.Normalizer)
		if perr == nil && nerr == nil {
			return parseByteLevel(&f, name, pattern, forms)
		}
	}
	p, err := newPipeline(&f, name)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// parseByteLevel builds the engine's tokenizer of a byte-level BPE whose
// pre-tokenizer is the one split pattern given and whose normalizer applies
// forms. Each vocabulary entry maps back to raw bytes and its id serves as
// its merge rank, which is how tiktoken-converted vocabularies (GPT-2, Llama
// 3, Qwen) are ordered. The merges list is therefore not read, whatever its
// format.
func parseByteLevel(f *hfFile, name, pattern string, forms []norm.Form) (*bpe, error) {
	m := &f.Model
	var vocab map[string]int
	if len(m.Vocab) == 0 {
		return nil, errors.New("model has no vocab")
	}
	if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
		return nil, fmt.Errorf("model vocab: %w", jsonError(err))
	}
	ranks, err := byteLevelRanks(vocab, nil)
	if err != nil {
		return nil, err
	}

	specials := addedIDs(f)
	split, err := newSplitter(pattern)
	if err != nil {
		return nil, err
	}
	enc, err := newEngine(ranks, specials, split)
	if err != nil {
		return nil, fmt.Errorf("model vocab: %w", err)
	}
	return &bpe{name: name, kind: "tokenizer.json, byte-level BPE", enc: enc, forms: forms, added: newAddedTokens(specials)}, nil
}

// addedIDs maps the text of each added token to its id.
func addedIDs(f *hfFile) map[string]int {
	ids := make(map[string]int, len(f.AddedTokens))
	for _, t := range f.AddedTokens {
		if t.Content != "" {
			ids[t.Content] = t.ID
		}
	}
	return ids
}

// splitPattern returns the pattern of the Isolated split equivalent to a
// byte-level pre-tokenizer: a bare ByteLevel (GPT-2's pattern), or a Sequence of one
// Split and a ByteLevel without its own regex (Llama 3, Qwen).
func splitPattern(p *hfPreTokenizer) (string, error) {
	if p == nil {
		return "", fmt.Errorf("%w: no pre-tokenizer (only byte-level BPE models are supported)", ErrUnsupported)
	}
	steps := []hfPreTokenizer{*p}
	if p.Type == "Sequence" {
		steps = p.Pretokenizers
	}
	var patterns []string
	byteLevel := false
	for _, s := range steps {
		switch s.Type {
		case "ByteLevel":
			if s.AddPrefixSpace != nil && *s.AddPrefixSpace {
				return "", fmt.Errorf("%w: ByteLevel pre-tokenizer with add_prefix_space", ErrUnsupported)
			}
			byteLevel = true
			if s.UseRegex == nil || *s.UseRegex {
				patterns = append(patterns, gpt2Pattern)
			}
		case "Split":
			if s.Behavior != "Isolated" || s.Invert {
				return "", fmt.Errorf("%w: Split pre-tokenizer with behavior %s and invert %v (only Isolated is supported)", ErrUnsupported, brief(s.Behavior), s.Invert)
			}
			switch {
			case s.Pattern.Regex != nil:
				patterns = append(patterns, *s.Pattern.Regex)
			case s.Pattern.String != nil:
				patterns = append(patterns, regexp2.Escape(*s.Pattern.String))
			default:
				return "", fmt.Errorf("%w: Split pre-tokenizer without a pattern", ErrUnsupported)
			}
		default:
			return "", fmt.Errorf("%w: pre-tokenizer type %s (only ByteLevel and Split are supported)", ErrUnsupported, brief(s.Type))
		}
	}
	if !byteLevel {
		return "", fmt.Errorf("%w: no ByteLevel pre-tokenizer (only byte-level BPE models are supported)", ErrUnsupported)
	}
	if len(patterns) != 1 {
		return "", fmt.Errorf("%w: %d regex splitting stages (exactly one is supported)", ErrUnsupported, len(patterns))
	}
	return patterns[0], nil
}

// normForms returns the Unicode normalizations a normalizer applies, in order.
func normForms(n *hfNormalizer) ([]norm.Form, error) {
	if n == nil {
		return nil, nil
	}
	switch n.Type {
	case "NFC":
		return []norm.Form{norm.NFC}, nil
	case "NFD":
		return []norm.Form{norm.NFD}, nil
	case "NFKC":
		return []norm.Form{norm.NFKC}, nil
	case "NFKD":
		return []norm.Form{norm.NFKD}, nil
	case "Sequence":
		var forms []norm.Form
		for i := range n.Normalizers {
			f, err := normForms(&n.Normalizers[i])
			if err != nil {
				return nil, err
			}
			forms = append(forms, f...)
		}
		return forms, nil
	}
	return nil, fmt.Errorf("%w: normalizer type %s (only NFC, NFD, NFKC and NFKD are supported)", ErrUnsupported, brief(n.Type))
}

// byteLevelRanks maps a byte-level vocabulary (every byte spelt as a
// printable rune, GPT-2's bytes_to_unicode) to raw bytes → rank. Entries
// that are added tokens are left out if they are not byte-level encoded
// (DeepSeek V3 lists its special tokens so): they are matched as added
// tokens, never merged.
func byteLevelRanks(vocab map[string]int, added map[string]int) (*vocab, error) {
	ranks := make(map[string]int32, len(vocab))
	var buf []byte
entries:
	for tok, id := range vocab {
		buf = buf[:0]
		for _, r := range tok {
			if r >= rune(len(byteOfRune)) || byteOfRune[r] < 0 {
				if _, ok := added[tok]; ok {
					continue entries
				}
				return nil, fmt.Errorf("%w: vocabulary entry %s is not byte-level encoded", ErrUnsupported, brief(tok))
			}
			buf = append(buf, byte(byteOfRune[r]))
		}
		if id < 0 || id >= noRank {
			return nil, fmt.Errorf("vocabulary id %d out of range [0, %d)", id, noRank)
		}
		ranks[string(buf)] = int32(id)
	}
	for b := range 256 {
		if _, ok := ranks[string([]byte{byte(b)})]; !ok {
			return nil, fmt.Errorf("%w: vocabulary lacks byte 0x%02x (not a byte-level BPE)", ErrUnsupported, b)
		}
	}
	return vocabOf(ranks)
}

// byteOfRune inverts GPT-2's bytes_to_unicode: printable Latin-1 bytes stand
// for themselves and the other 68 bytes, in order, for runes 256–323. Other
// runes map to -1.
var byteOfRune = func() [324]int16 {
	var t [324]int16
	for i := range t {
		t[i] = -1
	}
	n := 0
	for b := range 256 {
		if ('!' <= b && b <= '~') || ('¡' <= b && b <= '¬') || ('®' <= b && b <= 'ÿ') {
			t[b] = int16(b)
		} else {
			t[256+n] = int16(b)
			n++
		}
	}
	return t
}()

// brief quotes a string from a tokenizer file for an error message, cut to
// 40 runes: a hostile file must not flood the terminal.
func brief(s string) string {
	if cut := clip(s, 40); cut != s {
		return strconv.Quote(strings.TrimSuffix(cut, "…")) + "…"
	}
	return strconv.Quote(s)
}

// clip cuts s to n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// jsonError describes an error of encoding/json without quoting the input.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("invalid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		where := "the top-level value"
		if typ.Field != "" {
			where = "field " + typ.Field
		}
		got, _, _ := strings.Cut(typ.Value, " ")
		return fmt.Errorf("%s is a JSON %s, want %s", where, got, jsonKind(typ.Type))
	}
	return err
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	}
	return t.String()
}
