package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/aiperf-go/aiperf/internal/media"
)

// MaxFileMedia bounds the media an input file's records name, held in
// memory as data URIs once each: past it the file is refused at the line
// that went over.
const MaxFileMedia = 8 << 30

// mediaRef is one media input of a record: a URL (http, https), a data URI
// or a local path, with the field it came from.
type mediaRef struct {
	kind  media.Kind
	field string
	value string
	uuid  string // an image's image_uuids entry; value "" is a cache reference only
}

// mediaRefs lists a turn's media inputs in AIPerf's order (images, audios,
// videos): image, audio and video are one string each; images, audios and
// videos a list of strings or of {"name", "contents": [strings]} objects.
// image_uuids (vLLM's multimodal cache ids, imageuuids.go) go with images
// given as a list of strings; pool records (random_pool) have none.
func (t *turnRecord) mediaRefs(field string, pool bool) ([]mediaRef, []problem) {
	var refs []mediaRef
	var ps []problem
	for _, f := range []struct {
		kind        media.Kind
		one, many   string
		oneV, manyV json.RawMessage
	}{{media.Image, "image", "images", t.Image, t.Images}, {media.Audio, "audio", "audios", t.Audio, t.Audios},
		{media.Video, "video", "videos", t.Video, t.Videos}} {
		if f.kind == media.Image && truthy(t.ImageUUIDs) {
			r, p := t.uuidImageRefs(field, pool)
			refs, ps = append(refs, r...), append(ps, p...)
			continue
		}
		if truthy(f.oneV) {
			var s string
			if json.Unmarshal(f.oneV, &s) != nil {
				ps = append(ps, problemf(field+f.one, "expected a string: a URL, a data URI or a local path"))
			} else {
				refs = append(refs, mediaRef{f.kind, field + f.one, s, ""})
			}
		}
		if truthy(f.manyV) {
			list, err := stringsOrNamed(f.manyV)
			if err != nil {
				ps = append(ps, problemf(field+f.many, `expected a list of strings or of {"name": …, "contents": [strings]} objects`))
			}
			for i, s := range list {
				refs = append(refs, mediaRef{f.kind, fmt.Sprintf("%s%s[%d]", field, f.many, i), s, ""})
			}
		}
	}
	return refs, ps
}

// stringsOrNamed decodes a list of strings or of {"contents": [strings]}
// objects into its non-empty strings.
func stringsOrNamed(raw json.RawMessage) ([]string, error) {
	var plain []string
	if json.Unmarshal(raw, &plain) == nil {
		return nonEmpty(plain), nil
	}
	var named []struct {
		Contents []string `json:"contents"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range named {
		out = append(out, nonEmpty(n.Contents)...)
	}
	return out, nil
}

// fileMedia loads the media an input file names, once each: URLs are
// passed through; data URIs and local files are checked (an image that
// decodes, a WAV or MP3, an MP4 or WebM) and kept as data URIs. A relative
// path is the working directory's, else the input file's directory's.
type fileMedia struct {
	dir   string
	mu    sync.Mutex
	items map[mediaKey]media.Item
	held  int64
	uuids bool // some image carries an image_uuids entry
}

type mediaKey struct {
	kind  media.Kind
	value string
}

func newFileMedia(inputFile string) *fileMedia {
	return &fileMedia{dir: filepath.Dir(inputFile), items: map[mediaKey]media.Item{}}
}

// check loads every ref, reporting each that fails as a problem of its
// field. A nil fileMedia checks nothing (record type detection).
func (fm *fileMedia) check(refs []mediaRef) []problem {
	if fm == nil {
		return nil
	}
	var ps []problem
	for _, r := range refs {
		if r.uuid != "" {
			fm.mu.Lock()
			fm.uuids = true
			fm.mu.Unlock()
		}
		if r.value == "" {
			continue // a cache reference: nothing to load
		}
		if _, err := fm.load(r); err != nil {
			ps = append(ps, problemf(r.field, "%v", err))
		}
	}
	return ps
}

// list returns the items of refs, loading any not loaded yet.
func (fm *fileMedia) list(refs []mediaRef) ([]media.Item, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]media.Item, len(refs))
	for i, r := range refs {
		if r.value == "" {
			out[i] = media.Item{Kind: r.kind, UUID: r.uuid}
			continue
		}
		it, err := fm.load(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.field, err)
		}
		it.UUID = r.uuid
		out[i] = it
	}
	return out, nil
}

// load returns ref's item, loading it the first time.
func (fm *fileMedia) load(r mediaRef) (media.Item, error) {
	key := mediaKey{r.kind, r.value}
	fm.mu.Lock()
	it, ok := fm.items[key]
	fm.mu.Unlock()
	if ok {
		return it, nil
	}
	it, err := fm.read(r)
	if err != nil {
		return media.Item{}, err
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if _, ok := fm.items[key]; !ok {
		if fm.held+int64(len(it.URL)) > MaxFileMedia {
			return media.Item{}, fmt.Errorf("the media this file names pass %d GiB held in memory: split the file", MaxFileMedia>>30)
		}
		fm.items[key] = it
		fm.held += int64(len(it.URL))
	}
	return fm.items[key], nil
}

// read makes the item of a ref.
func (fm *fileMedia) read(r mediaRef) (media.Item, error) {
	v := r.value
	switch {
	case strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://"):
		if r.kind == media.Audio {
			return media.Item{}, errors.New("an audio is sent as data (input_audio), so it must be a local file or a data URI, not a URL")
		}
		return media.PassThrough(r.kind, v), nil
	case strings.HasPrefix(v, "data:"):
		it, err := media.FromDataURI(r.kind, v)
		if err != nil {
			return media.Item{}, fmt.Errorf("%s data URI: %w", r.kind, err)
		}
		return it, nil
	case strings.Contains(v, "://"):
		return media.Item{}, fmt.Errorf("%q: expected an http(s) URL, a data URI or a local path", clipRef(v))
	}
	path := v
	if !filepath.IsAbs(path) {
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join(fm.dir, v)
		}
	}
	it, err := media.Load(r.kind, path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return media.Item{}, fmt.Errorf("%s file %q does not exist", r.kind, v)
		}
		return media.Item{}, fmt.Errorf("%s file: %w", r.kind, err)
	}
	return it, nil
}

// clipRef shortens a reference for an error message.
func clipRef(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// HasMedia reports whether an input file's records name any media (false
// for a Dataset Open did not read from a file).
func HasMedia(d Dataset) bool {
	var fm *fileMedia
	switch x := d.(type) {
	case *fileDataset:
		fm = x.media
	case *poolDataset:
		fm = x.media
	}
	if fm == nil {
		return false
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	return len(fm.items) > 0
}
