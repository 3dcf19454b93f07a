package dataset

import (
	"context"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/media"
)

// attachImages gives every turn of the synthetic conversations its
// --image-batch-size images, generated now, before any load: image j of the
// run (turns in order) is drawn from (seed, j), so a dataset's images are
// the same for a seed whatever the CPUs.
func (d *memDataset) attachImages(ctx context.Context, o Options) error {
	img := o.Images
	if !img.Enabled() {
		return nil
	}
	items, err := media.Images(ctx, img, o.Seed, d.turns*img.Batch)
	if err != nil {
		return fmt.Errorf("synthetic images: %w", err)
	}
	j := 0
	for i := range d.convs {
		for k := range d.convs[i].Turns {
			d.convs[i].Turns[k].Media = items[j : j+img.Batch : j+img.Batch]
			j += img.Batch
		}
	}
	return nil
}
