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
// each request with them, read again when they are about to expire. Their
// secrets join what is redacted from error messages.
func (c *cell) signing(ctx context.Context) error {
	if c.p.AuthType != plan.AuthSigV4 {
		return nil
	}
	chain := &sigv4.Chain{Profile: c.p.AWSProfile}
	creds, err := chain.Get(ctx)
	if err != nil {
		return &InputError{fmt.Errorf("--auth-type sigv4: %w (nothing was sent)", err)}
	}
	fmt.Fprintf(c.log, "requests signed with AWS SigV4 for %s in %s, credentials from %s\n", c.p.AWSService, c.p.AWSRegion, creds.Source)
	if c.p.APIKey != "" {
		c.warn("--api-key is not sent: --auth-type sigv4 signs every request in its Authorization header, as AIPerf does")
	}
	c.signSecrets = creds.Secrets()
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

// secrets are the values redacted from the clients' error messages: the
// profile's, and the signing credentials'.
func (c *cell) secrets() []string { return append(c.p.Secrets(), c.signSecrets...) }
