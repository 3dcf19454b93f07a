package bench

import (
	"fmt"

	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// checkMedia refuses an input file whose records name media when the
// endpoint type sends none: they would be dropped without a word.
func checkMedia(p plan.Profile, ds dataset.Dataset) error {
	if plan.SendsMedia(p.EndpointType) || !dataset.HasMedia(ds) {
		return nil
	}
	return fmt.Errorf("%s names images, audios or videos, and --endpoint-type %s sends none: use chat (nothing was sent)", p.InputFile, p.EndpointType)
}
