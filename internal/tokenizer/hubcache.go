package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// hubCacheRoot returns the Hugging Face hub cache directory the way
// huggingface_hub resolves it: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub; an
// error when none is set and there is no home directory ($HOME unset).
func hubCacheRoot() (string, error) {
	if dir := os.Getenv("HF_HUB_CACHE"); dir != "" {
		return dir, nil
	}
	if dir := os.Getenv("HF_HOME"); dir != "" {
		return filepath.Join(dir, "hub"), nil
	}
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return filepath.Join(dir, "huggingface", "hub"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no Hugging Face cache to look in (%w, and HF_HUB_CACHE, HF_HOME and XDG_CACHE_HOME are unset): "+
			"set HF_HUB_CACHE, or give --tokenizer a tokenizer.json path", err)
	}
	return filepath.Join(home, ".cache", "huggingface", "hub"), nil
}

// findInHubCache returns the path of model id's tokenizer.json in the local
// Hugging Face cache, at a revision as huggingface_hub resolves it: a
// branch or tag that refs/REVISION names, else a commit hash that is a
// snapshot's directory. The default revision, "" or "main", is the snapshot
// refs/main names or, without refs/main, the only snapshot present. It never
// downloads; its error lists every path it searched and how to fix the
// problem.
func findInHubCache(id, revision string) (string, error) {
	if revision == "" {
		revision = "main"
	}
	if !filepath.IsLocal(revision) || strings.ContainsAny(revision, `\`) {
		return "", fmt.Errorf("load tokenizer %s: revision %s is not a branch, tag or commit hash", id, brief(revision))
	}
	root, err := hubCacheRoot()
	if err != nil {
		return "", fmt.Errorf("load tokenizer %s: %w", id, err)
	}
	repo := filepath.Join(root, "models--"+strings.ReplaceAll(id, "/", "--"))
	snapshots := filepath.Join(repo, "snapshots")
	ref := filepath.Join(repo, "refs", filepath.FromSlash(revision))
	var searched []string
	if sha, err := os.ReadFile(ref); err == nil {
		hash := strings.TrimSpace(string(sha))
		path := filepath.Join(snapshots, hash, "tokenizer.json")
		if filepath.IsLocal(hash) && isFile(path) {
			return path, nil
		}
		searched = append(searched, ref+": names snapshot "+clip(hash, 80), path+": missing")
	} else {
		searched = append(searched, ref+": missing")
		if revision != "main" {
			path := filepath.Join(snapshots, filepath.FromSlash(revision), "tokenizer.json")
			if isFile(path) {
				return path, nil
			}
			searched = append(searched, path+": missing")
		} else {
			path, problem := onlySnapshot(snapshots)
			if problem == "" {
				return path, nil
			}
			searched = append(searched, problem)
		}
	}
	return "", &hubMissError{id: id, revision: revision, searched: searched}
}

// hubMissError is a model id that is not in the local Hugging Face cache.
type hubMissError struct {
	id, revision string
	searched     []string // each path looked at, and what was wrong with it
}

func (e *hubMissError) Error() string {
	return fmt.Sprintf("load tokenizer %s: %s", e.id, e.detail())
}

// detail is the error without its "load tokenizer ID" prefix.
func (e *hubMissError) detail() string {
	at := ""
	if e.revision != "main" {
		at = " --revision " + e.revision
	}
	return fmt.Sprintf("not found in the local Hugging Face cache (nothing is ever downloaded); searched:\n  %s\n"+
		"fix: pass the path of a tokenizer.json file (or of a directory holding one), "+
		"or populate the cache with `huggingface-cli download %s tokenizer.json%s`",
		strings.Join(e.searched, "\n  "), e.id, at)
}

// onlySnapshot returns the tokenizer.json of the only snapshot in the
// directory snapshots, or a line saying what is wrong.
func onlySnapshot(snapshots string) (path, problem string) {
	entries, err := os.ReadDir(snapshots)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	switch {
	case err != nil:
		return "", snapshots + ": missing"
	case len(dirs) == 1:
		path := filepath.Join(snapshots, dirs[0], "tokenizer.json")
		if isFile(path) {
			return path, ""
		}
		return "", path + ": missing"
	}
	return "", fmt.Sprintf("%s: %d snapshots, cannot choose one without refs/main", snapshots, len(dirs))
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
