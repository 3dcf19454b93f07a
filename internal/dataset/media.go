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
