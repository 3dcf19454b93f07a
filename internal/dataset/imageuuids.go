package dataset

import (
	"encoding/json"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/media"
)

// A single_turn or multi_turn record may give its images vLLM multimodal
// cache ids, AIPerf's image_uuids: one per entry of "images" (a list of
// strings), sent beside each image as its content part's "uuid" (vLLM
// keys its processor and prefix caches by it instead of the image's
// bytes). Without "images" the ids are cache references only: each image
// is sent as {"url": ""} with its uuid, and the server must hold it.
//
// --uuid-and-strip (AIPerf's) strips, within one session of a single_turn
// file (the rows sharing a session_id, in file order), the bytes of an
// image whose uuid an earlier row of the session sent with its bytes: the
// request carries the reference only. Repeats within one row keep their
// bytes (the server fills its cache after the request's misses).

// uuidImageRefs lists the images of a turn that has image_uuids.
func (t *turnRecord) uuidImageRefs(field string, pool bool) ([]mediaRef, []problem) {
	bad := func(f, format string, args ...any) ([]mediaRef, []problem) {
		return nil, []problem{problemf(field+f, format, args...)}
	}
	if pool {
		return bad("image_uuids", "random_pool records carry no image_uuids (vLLM cache ids): use a single_turn or multi_turn file")
	}
	var uuids []string
	if json.Unmarshal(t.ImageUUIDs, &uuids) != nil {
		return bad("image_uuids", "expected a list of strings: a vLLM multimodal cache id for each entry of images")
	}
	if truthy(t.Image) {
		return bad("image_uuids", "image_uuids cannot be used with the singular image field: give images as a list")
	}
	contents := make([]string, len(uuids))
	if truthy(t.Images) {
		contents = nil
		if json.Unmarshal(t.Images, &contents) != nil {
			return bad("image_uuids", `image_uuids go with images given as a list of strings, not of {"name", "contents"} objects`)
		}
	}
	if len(contents) != len(uuids) {
		return bad("image_uuids", "image_uuids length (%d) must match images length (%d)", len(uuids), len(contents))
	}
	refs := make([]mediaRef, len(uuids))
	for i, u := range uuids {
		if u == "" {
			return bad(fmt.Sprintf("image_uuids[%d]", i), "image_uuids must not contain empty strings")
		}
		refs[i] = mediaRef{media.Image, fmt.Sprintf("%simages[%d]", field, i), contents[i], u}
	}
	return refs, nil
}

// stripSeen is --uuid-and-strip on one row's items: an image whose uuid an
// earlier row of the session sent with its bytes (seen) becomes a cache
// reference; the uuids this row sends with bytes are then added to seen.
func stripSeen(items []media.Item, seen map[string]bool) {
	var sent []string
	for i, it := range items {
		switch {
		case it.UUID == "":
		case seen[it.UUID]:
			items[i] = media.Item{Kind: it.Kind, UUID: it.UUID}
		case it.URL != "":
			sent = append(sent, it.UUID)
		}
	}
	for _, u := range sent {
		seen[u] = true
	}
}

// uuidStripRefused is the error of --uuid-and-strip on a file that is not
// single_turn (AIPerf's message for multi_turn).
func uuidStripRefused(kind string) error {
	if kind == TypeMultiTurn {
		return fmt.Errorf("--uuid-and-strip is not supported with --custom-dataset-type multi_turn: load-time dedup of repeated " +
			"images is only implemented for single_turn; use --custom-dataset-type single_turn (with session_id-grouped rows) for cache-reuse benchmarks")
	}
	what := "a " + kind + " file"
	if kind == "directory" {
		what = "a directory of files"
	}
	return fmt.Errorf("--uuid-and-strip strips repeated images of single_turn sessions; %s has none (remove the option)", what)
}

// HasImageUUIDs reports whether an input file's records give image_uuids.
func HasImageUUIDs(d Dataset) bool {
	x, ok := d.(*fileDataset)
	if !ok || x.media == nil {
		return false
	}
	x.media.mu.Lock()
	defer x.media.mu.Unlock()
	return x.media.uuids
}
