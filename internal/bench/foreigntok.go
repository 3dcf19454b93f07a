package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// foreignTokenizer warns when a model with a Hugging Face id is counted
// with a built-in encoding, which is not its own tokenizer: ISL and OSL are
// then approximate (the server's usage is still checked against them).
func foreignTokenizer(p plan.Profile) string {
	if tokenizer.IsBuiltin(p.Tokenizer) && len(p.Model) > 0 && strings.Contains(p.Model[0], "/") {
		enc := p.Tokenizer
		if enc == "" || enc == "builtin" { // AIPerf's name for the default encoding
			enc = tokenizer.Default
		}
		how := fmt.Sprintf("pass --tokenizer %s (it is in the local Hugging Face cache)", p.Model[0])
		if localPath(p.Model[0]) { // no download can fill it
			how = fmt.Sprintf("pass --tokenizer %s (the model's directory, holding its tokenizer.json) or the path of its "+
				"tokenizer.json,", p.Model[0])
		} else if _, err := tokenizer.Locate(p.Model[0], p.TokenizerRevision); err != nil {
			how = fmt.Sprintf("put it in the local Hugging Face cache (huggingface-cli download %s tokenizer.json) and pass "+
				"--tokenizer %s, or pass the path of its tokenizer.json,", p.Model[0], p.Model[0])
		}
		alt := " (or --use-server-token-count to take the server's usage)"
		if p.UseServerTokenCount {
			alt = " (--use-server-token-count takes the server's usage where it is trusted)"
		}
		return fmt.Sprintf("ISL and OSL are counted with the built-in %s encoding, not %s's own tokenizer: %s for exact counts%s",
			enc, p.Model[0], how, alt)
	}
	return ""
}

// localPath reports whether the model name m is a local path (vLLM serves
// a model by its directory): it starts with '/', '.' or '~', or names an
// existing directory.
func localPath(m string) bool {
	if strings.HasPrefix(m, "/") || strings.HasPrefix(m, ".") || strings.HasPrefix(m, "~") || filepath.IsAbs(m) {
		return true
	}
	st, err := os.Stat(m)
	return err == nil && st.IsDir()
}
