package dataset

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/aiperf-go/aiperf/internal/media"
)

// attachMedia gives every turn of the synthetic conversations its
// synthetic media, made now, before any load, in AIPerf's order: its
// --image-batch-size images, its --audio-batch-size audios, then its
// --video-batch-size videos. Medium j
// of a kind (turns in order) is drawn from (seed, j), so a dataset's media
// are the same for a seed whatever the CPUs.
func (d *memDataset) attachMedia(ctx context.Context, o Options) error {
	type kind struct {
		what  string
		batch int
		make  func(n int) ([]media.Item, error)
	}
	left, err := checkMediaHeld(o, d.turns)
	if err != nil {
		return err
	}
	var kinds []kind
	if o.Images.Enabled() {
		kinds = append(kinds, kind{"images", o.Images.Batch, func(n int) ([]media.Item, error) { return media.Images(ctx, o.Images, o.Seed, n) }})
	}
	if o.Audios.Enabled() {
		kinds = append(kinds, kind{"audios", o.Audios.Batch, func(n int) ([]media.Item, error) { return media.Audios(ctx, o.Audios, o.Seed, n) }})
	}
	if o.Videos.Enabled() {
		kinds = append(kinds, kind{"videos", o.Videos.Batch, func(n int) ([]media.Item, error) { return media.Videos(ctx, o.Videos, o.Seed, n, left) }})
	}
	for _, k := range kinds {
		items, err := k.make(d.turns * k.batch)
		if err != nil {
			return fmt.Errorf("synthetic %s: %w", k.what, err)
		}
		j := 0
		for i := range d.convs {
			for t := range d.convs[i].Turns {
				turn := &d.convs[i].Turns[t]
				turn.Media = append(turn.Media, items[j:j+k.batch]...)
				j += k.batch
			}
		}
	}
	return nil
}

// MaxMediaHeld bounds the synthetic media a run makes before its load,
// all held as data URIs: 8 GiB (1,000 noise PNGs of 1024×1024 hold 4.2 GB).
const MaxMediaHeld = 8 << 30

// heldKind is one kind of synthetic media as checkMediaHeld weighs it.
type heldKind struct {
	what, batchFlag string
	batch           int
	each, largest   int64 // the estimate a medium holds on average, and the largest
	lower           string
}

// checkMediaHeld refuses synthetic media that would hold more than
// MaxMediaHeld together (images and audios: one per turn and batch, each
// at its estimate over many), or one medium larger than
// media.MaxItemBytes (at its largest draw), before any is made. It
// returns what is left of MaxMediaHeld for videos, whose encoded size is
// known only as they are made (media.Videos counts it).
func checkMediaHeld(o Options, turns int) (int64, error) {
	var kinds []heldKind
	if o.Images.Enabled() {
		kinds = append(kinds, heldKind{"images", "--image-batch-size", o.Images.Batch, o.Images.HeldBytes(), o.Images.MaxItemHeld(), o.Images.Lower()})
	}
	if o.Audios.Enabled() {
		kinds = append(kinds, heldKind{"audios", "--audio-batch-size", o.Audios.Batch, o.Audios.HeldBytes(), o.Audios.MaxItemHeld(), o.Audios.Lower()})
	}
	var total float64
	var parts []string
	for _, k := range kinds {
		if k.largest > media.MaxItemBytes {
			return 0, fmt.Errorf("synthetic %s: one would hold up to about %s, more than the %s one medium may: lower %s",
				k.what, media.Bytes(k.largest), media.Bytes(media.MaxItemBytes), k.lower)
		}
		n := float64(turns) * float64(k.batch)
		total += n * float64(k.each)
		parts = append(parts, fmt.Sprintf("%d %s (%d turns × %s %d) of about %s each",
			int64(n), k.what, turns, k.batchFlag, k.batch, media.Bytes(k.each)))
	}
	if total <= MaxMediaHeld {
		return max(1, MaxMediaHeld-int64(total)), nil
	}
	var lower []string
	for _, k := range kinds {
		lower = append(lower, k.batchFlag, k.lower)
	}
	what := "synthetic media"
	if len(kinds) == 1 {
		what = "synthetic " + kinds[0].what
	}
	return 0, fmt.Errorf("%s: %s would hold about %s, more than the %s a run may: lower --num-dataset-entries, %s",
		what, strings.Join(parts, " and "), media.Bytes(int64(min(total, math.MaxInt64))), media.Bytes(MaxMediaHeld), strings.Join(lower, ", "))
}
