package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aiperf-go/aiperf/internal/media"
)

// Images is the profile's Image Input options.
func (p *Profile) Images() media.ImageOptions {
	batch := 1
	if p.ImageBatchSize != nil {
		batch = *p.ImageBatchSize
	}
	return media.ImageOptions{WidthMean: p.ImageWidthMean, WidthStddev: p.ImageWidthStddev,
		HeightMean: p.ImageHeightMean, HeightStddev: p.ImageHeightStddev, Batch: batch,
		Format: p.ImageFormat, Source: p.ImageSource, Sampling: p.ImageSourceSampling}
}

// mediaEndpoints are the endpoint types whose requests carry images,
// audios and videos (content parts of a chat message).
var mediaEndpoints = map[string]bool{EndpointChat: true}

// SendsMedia reports whether requests of the endpoint type carry media.
func SendsMedia(endpointType string) bool { return mediaEndpoints[endpointType] }

// media checks the Image Input options: valid values, and an endpoint
// type that sends images.
func (v *validator) media(p *Profile) {
	img := p.Images()
	for _, x := range []float64{img.WidthMean, img.WidthStddev, img.HeightMean, img.HeightStddev} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return // allFinite said so
		}
	}
	if err := img.Validate(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var fe *media.FlagError
			if errors.As(e, &fe) {
				v.add(strings.ReplaceAll(fe.Flag, "-", "_"), fe.Msg)
			} else {
				v.add("image_source", e.Error())
			}
		}
		return
	}
	if img.Enabled() && p.InputFile != "" {
		v.add("image_width_mean", "synthetic images go with synthetic prompts: with --input-file, give the images in the records' image or images fields (or remove the --image-* options)")
	}
	if img.Enabled() && !mediaEndpoints[p.EndpointType] {
		v.add("image_width_mean", fmt.Sprintf("synthetic images are sent as content parts of chat messages: --endpoint-type %s sends none (use chat, or remove the --image-* options)", p.EndpointType))
	}
}
