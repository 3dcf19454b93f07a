package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// writeInlineRecords writes a config file's inline dataset records (a
// profile whose InputFile is plan.InlineRecords) to a JSONL file under dir,
// named by its content, and points the profile at it: the run then reads
// them as it reads --input-file, and the artifacts keep what was sent.
func writeInlineRecords(p *plan.Profile, dir string) error {
	if p.InputRecords == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(p.InputRecords))
	path, err := filepath.Abs(filepath.Join(dir, "inline_records_"+hex.EncodeToString(sum[:4])+".jsonl"))
	if err != nil {
		return fmt.Errorf("write the config file's inline records: %w", err)
	}
	if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, []byte(p.InputRecords)) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write the config file's inline records: %w", err)
		}
		if err := os.WriteFile(path, []byte(p.InputRecords), 0o644); err != nil {
			return fmt.Errorf("write the config file's inline records: %w", err)
		}
	}
	p.InputFile, p.InputRecords = path, ""
	return nil
}
