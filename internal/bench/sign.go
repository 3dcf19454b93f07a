package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/sigv4"
)

// signing readies --auth-type sigv4 before any traffic: its credentials
// are read now (a failure is the user's to mend, exit 2), and c.sign signs
// each request with them, read again when they are about to expire.
func (c *cell) signing(ctx context.Context) error {
	if c.p.AuthType != plan.AuthSigV4 {
		return nil
	}
	// Each set of credentials read, the first and every refresh's, is
	// hidden from then on by every Redactor of the process (error
	// messages, exports), whatever a server echoes back.
	plan.HideSignatures()
	chain := &sigv4.Chain{Profile: c.p.AWSProfile, OnRead: func(cr sigv4.Credentials) { plan.AddSecrets(cr.Secrets()...) },
		Background: ctx} // refreshes end with the cell (Ctrl-C), not with the request that started them
	creds, err := chain.Get(ctx)
	if err != nil {
		return &InputError{fmt.Errorf("--auth-type sigv4: %w (nothing was sent)", err)}
	}
	fmt.Fprintf(c.log, "requests signed with AWS SigV4 for %s in %s, credentials from %s\n", c.p.AWSService, c.p.AWSRegion, creds.Source)
	if c.p.APIKey != "" {
		c.warn("--api-key is not sent: --auth-type sigv4 signs every request in its Authorization header, as AIPerf does")
	}
	region, service := c.p.AWSRegion, c.p.AWSService
	c.sign = func(r *http.Request, body []byte) error {
		creds, err := chain.Get(r.Context())
		if err != nil {
			return err
		}
		sigv4.Sign(r, body, creds, region, service, time.Now())
		return nil
	}
	return nil
}
