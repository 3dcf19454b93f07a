package store

import (
	"encoding/json"
	"fmt"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// auditTallies points at the fields of a result.Audit that the runs row
// keeps in its audit_tallies column (JSON, under the audit's own names):
// encoded, it holds their values; decoded into, it sets them.
type auditTallies struct {
	Cut                 *int                  `json:"cut"`
	CutGracePeriod      *int                  `json:"cut_grace_period"`
	CutInterrupt        *int                  `json:"cut_interrupt"`
	CutOnPurpose        *int                  `json:"cut_on_purpose"`
	CutStopped          *int                  `json:"cut_stopped"`
	ClientErrors        *int                  `json:"client_errors"`
	Bursts              *int                  `json:"bursts"`
	NotStreamed         *int                  `json:"not_streamed"`
	Malformed           *int                  `json:"malformed_chunks"`
	UsageUntrusted      *int                  `json:"usage_untrusted"`
	VideoUntrusted      *int                  `json:"video_untrusted"`
	VideoUntrustedFirst *string               `json:"video_untrusted_first"`
	CacheDropped        *int                  `json:"cache_dropped"`
	CacheDroppedFirst   *string               `json:"cache_dropped_first"`
	Branches            **metrics.BranchStats `json:"branches"`
}

// talliesOf is the tallies of a.
func talliesOf(a *result.Audit) auditTallies {
	return auditTallies{&a.Cut, &a.CutGracePeriod, &a.CutInterrupt, &a.CutOnPurpose, &a.CutStopped,
		&a.ClientErrors, &a.Bursts, &a.NotStreamed, &a.Malformed, &a.UsageUntrusted, &a.VideoUntrusted, &a.VideoUntrustedFirst,
		&a.CacheDropped, &a.CacheDroppedFirst, &a.Branches}
}

// encodeTallies is the audit_tallies value of a.
func encodeTallies(a *result.Audit) (string, error) {
	b, err := json.Marshal(talliesOf(a))
	if err != nil {
		return "", fmt.Errorf("encode audit tallies: %w", err)
	}
	return string(b), nil
}

// decodeTallies sets a's tallies from an audit_tallies value; one stored
// before they were kept ('{}') leaves them zero.
func decodeTallies(a *result.Audit, s string) error {
	t := talliesOf(a)
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return fmt.Errorf("decode audit tallies: %w", err)
	}
	return nil
}
