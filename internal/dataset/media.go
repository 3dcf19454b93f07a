package dataset

import (
	"context"
	"fmt"

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
	var kinds []kind
	if o.Images.Enabled() {
		kinds = append(kinds, kind{"images", o.Images.Batch, func(n int) ([]media.Item, error) { return media.Images(ctx, o.Images, o.Seed, n) }})
	}
	if o.Audios.Enabled() {
		kinds = append(kinds, kind{"audios", o.Audios.Batch, func(n int) ([]media.Item, error) { return media.Audios(ctx, o.Audios, o.Seed, n) }})
	}
	if o.Videos.Enabled() {
		kinds = append(kinds, kind{"videos", o.Videos.Batch, func(n int) ([]media.Item, error) { return media.Videos(ctx, o.Videos, o.Seed, n) }})
	}
	if err := checkMediaHeld(o, d.turns); err != nil {
		return err
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

// MaxMediaHeld bounds the synthetic images a run makes before its load,
// all held as data URIs: 8 GiB (1,000 noise PNGs of 1024×1024 hold 4.2 GB).
const MaxMediaHeld = 8 << 30

// checkMediaHeld refuses synthetic images that would hold more than
// MaxMediaHeld, before any is made: one per turn and --image-batch-size.
func checkMediaHeld(o Options, turns int) error {
	if !o.Images.Enabled() {
		return nil
	}
	n := int64(turns) * int64(o.Images.Batch)
	each := o.Images.HeldBytes()
	if each == 0 || n <= MaxMediaHeld/each {
		return nil
	}
	return fmt.Errorf("synthetic images: %d images (%d turns × --image-batch-size %d) of about %s each would hold about %s, "+
		"more than the %s a run may: lower --num-dataset-entries, --image-batch-size or the image size",
		n, turns, o.Images.Batch, gib(each), gib(each*n), gib(MaxMediaHeld))
}

// gib words a byte count in GiB, MiB or KiB.
func gib(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
}
