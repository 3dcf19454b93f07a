package bench

import (
	"context"
	"errors"
	"fmt"
)

// stage names a stage of Run before any load, as an interrupt's message
// says it: what Run was doing and what had been sent by then.
type stage string

const (
	stagePrepare  stage = "preparing the dataset (nothing was sent)"
	stageShareOut stage = "sharing out the load among the workers (nothing was sent)"
	stageReady    stage = "waiting for the server (no load was sent)"
	stageCollect  stage = "starting the server-metrics collection (no load was sent)"
)

// interrupted is the outcome of stage s before any load: its error err,
// or, when ctx ended (a Ctrl-C) while it ran, an error naming s, whether
// or not s noticed: with s's own error when that names the interrupt's
// cause (the signal), else with the cause.
func interrupted(ctx context.Context, s stage, err error) error {
	if ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if err == nil || !errors.Is(err, cause) {
		err = cause
	}
	return fmt.Errorf("interrupted while %s: %w", s, err)
}
