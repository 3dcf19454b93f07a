package tokenizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go-loader/assets"
	"golang.org/x/text/unicode/norm"
)

// Tokenizer turns text into token ids and back. Implementations are safe for
// concurrent use by many goroutines.
type Tokenizer interface {
	// Name identifies the vocabulary: a built-in encoding name, a Hugging
	// Face model id, or the absolute path of a tokenizer.json file.
	Name() string
	// Encode returns the token ids of text without adding any special
	// tokens (no BOS/EOS).
	Encode(text string) []int
	// Decode returns the text of ids; unknown ids decode to nothing.
	Decode(ids []int) string
	// Count returns len(Encode(text)).
	Count(text string) int
}

// Describe says which tokenizer counts, for the console: its name and what
// it is, e.g. "mistralai/Mistral-7B-v0.3 (tokenizer.json, SentencePiece BPE
// with byte fallback)" or "o200k_base (built-in tiktoken encoding)".
func Describe(t Tokenizer) string {
	if d, ok := t.(interface{ Describe() string }); ok {
		return d.Describe()
	}
	return t.Name()
}

// Default is the built-in encoding used when no tokenizer is named; AIPerf's
// "builtin" tokenizer is the same encoding.
const Default = "o200k_base"

// IsBuiltin reports whether spec names a built-in encoding ("" and
// "builtin" included).
func IsBuiltin(spec string) bool {
	return spec == "" || spec == "builtin" || slices.Contains(builtinNames, spec)
}

// builtinNames lists the encodings Load accepts by name, besides "" and
// "builtin", which mean Default.
var builtinNames = []string{"o200k_base", "cl100k_base"}

var (
	builtinMu sync.Mutex
	builtins  = map[string]Tokenizer{}
)

// Load resolves spec into a Tokenizer. spec is one of:
//   - "", "builtin" or a built-in encoding name ("o200k_base", "cl100k_base");
//   - the path of a tokenizer.json file (gzip-compressed if it ends in .gz);
//   - a directory holding tokenizer.json;
//   - a Hugging Face model id ("org/name", or "name" without an org such
//     as "gpt2"), looked up only in the local Hugging Face cache.
//
// Built-in encodings are built once per process and shared.
func Load(spec string) (Tokenizer, error) { return LoadRevision(spec, "") }

// LoadRevision is Load with the revision of a Hugging Face model id to
// look up in the local cache (AIPerf's --tokenizer-revision): a branch, tag
// or commit hash; "" or "main" is the default branch. A revision other than
// main is refused for a spec that is not a model id.
func LoadRevision(spec, revision string) (Tokenizer, error) {
	file, err := Locate(spec, revision)
	switch {
	case err != nil:
		return nil, err
	case file == "" && (spec == "" || spec == "builtin"):
		return loadBuiltin(Default)
	case file == "":
		return loadBuiltin(spec)
	case isPath(spec):
		return loadFile(file, "")
	case revision != "" && revision != "main":
		return loadFile(file, spec+"@"+revision)
	}
	return loadFile(file, spec)
}

// Locate returns the path of the tokenizer.json that LoadRevision loads for
// spec (a file, a directory's tokenizer.json or the snapshot's in the local
// Hugging Face cache), or "" for a built-in encoding. The files that go with
// a tokenizer (tokenizer_config.json and its chat template) are beside it.
func Locate(spec, revision string) (string, error) {
	builtin := IsBuiltin(spec)
	if revision != "" && revision != "main" && (builtin || isPath(spec)) {
		return "", revisionError(spec, revision)
	}
	switch {
	case builtin:
		return "", nil
	case isPath(spec):
		if fi, err := os.Stat(spec); err == nil && fi.IsDir() {
			return filepath.Join(spec, "tokenizer.json"), nil
		}
		return spec, nil
	case looksLikeModelID(spec):
		return findInHubCache(spec, revision)
	case strings.ContainsAny(spec, `/\`) || strings.HasSuffix(spec, ".json") || strings.HasSuffix(spec, ".gz"):
		return "", fmt.Errorf("load tokenizer: %s does not exist", spec)
	case looksLikeBareModelID(spec): // "gpt2": models--gpt2 in the cache, as Hugging Face resolves it
		path, err := findInHubCache(spec, revision)
		var miss *hubMissError
		if errors.As(err, &miss) {
			return "", fmt.Errorf("load tokenizer: unknown tokenizer %q: not a built-in (%s), an existing tokenizer.json file or directory, "+
				"or a Hugging Face model id (name or org/name) in the local cache: %s", spec, strings.Join(builtinNames, ", "), miss.detail())
		}
		return path, err
	}
	return "", fmt.Errorf("load tokenizer: unknown tokenizer %q: not a built-in (%s), an existing tokenizer.json file or directory, or a Hugging Face model id (name or org/name)",
		spec, strings.Join(builtinNames, ", "))
}

// looksLikeBareModelID reports whether spec has the shape of a Hugging Face
// model id without an organisation ("gpt2", "bert-base-uncased"): letters,
// digits, '-', '_' and '.', not starting with '.' or '-'.
func looksLikeBareModelID(spec string) bool {
	if spec == "" || len(spec) > 96 || spec[0] == '.' || spec[0] == '-' {
		return false
	}
	for _, r := range spec {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// revisionError refuses a revision for a spec that is not a model id.
func revisionError(spec, revision string) error {
	what := brief(spec)
	if spec == "" || spec == "builtin" {
		what = "the built-in " + Default
	}
	return fmt.Errorf("load tokenizer: revision %s applies only to a Hugging Face model id (name or org/name) looked up in the local cache, not to %s",
		brief(revision), what)
}

// isPath reports whether spec names an existing file or directory.
func isPath(spec string) bool {
	_, err := os.Stat(spec)
	return err == nil
}

// looksLikeModelID reports whether spec has the shape of a Hugging Face model
// id, "org/name", rather than of a file path.
func looksLikeModelID(spec string) bool {
	org, name, ok := strings.Cut(spec, "/")
	return ok && org != "" && name != "" && !strings.Contains(name, "/") &&
		!strings.HasPrefix(org, ".") && !strings.HasPrefix(org, "~") &&
		!strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".gz")
}

// builtin describes an embedded tiktoken encoding.
type builtin struct {
	file     string // in tiktoken-go-loader's assets
	pattern  string
	specials map[string]int // decoded, never matched
}

var builtinEncodings = map[string]builtin{
	"o200k_base": {"o200k_base.tiktoken", o200kPattern,
		map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}},
	"cl100k_base": {"cl100k_base.tiktoken", cl100kPattern, map[string]int{
		"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
		"<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}},
}

// loadBuiltin returns the shared tokenizer of a tiktoken encoding, building it
// from the embedded ranks on first use.
func loadBuiltin(name string) (Tokenizer, error) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if tok, ok := builtins[name]; ok {
		return tok, nil
	}
	tok, err := newBuiltin(name)
	if err != nil {
		return nil, fmt.Errorf("load built-in tokenizer %s: %w", name, err)
	}
	builtins[name] = tok
	return tok, nil
}

// newBuiltin builds the tokenizer of a built-in encoding.
func newBuiltin(name string) (*bpe, error) {
	enc := builtinEncodings[name]
	data, err := assets.Assets.ReadFile(enc.file)
	if err != nil {
		return nil, err
	}
	ranks, err := parseTiktoken(data)
	if err != nil {
		return nil, err
	}
	e, err := newEngine(ranks, enc.specials, scanners[enc.pattern])
	if err != nil {
		return nil, err
	}
	return &bpe{name: name, kind: "built-in tiktoken encoding", enc: e}, nil
}

// bpe is a byte-pair-encoding tokenizer: a built-in tiktoken encoding, or a
// Hugging Face tokenizer.json turned into one.
type bpe struct {
	name  string
	kind  string // for Describe
	enc   *engine
	added addedTokens // Hugging Face only
	// forms are the Unicode normalizations applied, in order, to the text
	// between added tokens.
	forms []norm.Form
}

func (b *bpe) Name() string { return b.name }

// Describe names the tokenizer and what it is.
func (b *bpe) Describe() string { return b.name + " (" + b.kind + ")" }

func (b *bpe) Encode(text string) []int {
	var ids []int
	b.added.split(text,
		func(s string, _ bool) { ids = append(ids, b.encodeOrdinary(s)...) },
		func(id int) { ids = append(ids, id) })
	return ids
}

// encodeOrdinary encodes text that holds no added token.
func (b *bpe) encodeOrdinary(text string) []int {
	if text == "" {
		return nil
	}
	return b.enc.encode(b.normal(text))
}

// normal is text under the tokenizer's Unicode normalizations.
func (b *bpe) normal(text string) string {
	for _, f := range b.forms {
		text = f.String(text)
	}
	return text
}

func (b *bpe) Decode(ids []int) string { return b.enc.decode(ids) }

// Count is len(Encode(text)), counted without keeping the ids.
func (b *bpe) Count(text string) int {
	n, _ := b.countUntil(text, nil)
	return n
}

// ErrUnsupported is wrapped by the error Load returns for a tokenizer.json
// whose model or pipeline this package cannot run.
var ErrUnsupported = errors.New("unsupported tokenizer")
