package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// maxSlotsRead bounds the GET /slots answer read (each slot describes its
// parameters and state; a few MiB covers hundreds of slots).
const maxSlotsRead = 4 << 20

// maxSlots bounds the slots a reset erases. llama-server has as many as its
// -np (4 by default, rarely more than a few hundred); a longer list is not
// one to trust, and each slot costs a POST with its own retries, a console
// row, an export entry and a store row.
const maxSlots = 1024

// resetSlots is the reset of a llama.cpp server (llama-server), which has no
// cache-reset route: it lists the slots (GET /slots) and erases each
// (POST /slots/{id}?action=erase, retried as any reset POST).
func (c *Client) resetSlots(ctx context.Context, origin string, h plan.ResetHook) ([]Call, error) {
	base := strings.TrimRight(origin, "/")
	ids, err := c.listSlots(ctx, base, h)
	if err != nil {
		call := Call{Hook: HookReset, Origin: plan.RedactURL(base), Path: "/slots", Attempts: 1,
			StartedAt: c.now().UnixNano(), Error: c.redact.Redact(err.Error())}
		return []Call{call}, c.redact.Error(fmt.Errorf("GET %s/slots: %w (llama-server lists its slots unless started "+
			"with --no-slots)", plan.RedactURL(base), err))
	}
	var calls []Call
	for _, id := range ids {
		call, err := c.post(ctx, target{hook: HookReset, origin: origin, path: fmt.Sprintf("/slots/%d?action=erase", id),
			timeout: h.Timeout, retryBudget: h.MaxRetry, retry: true})
		calls = append(calls, call)
		if err != nil {
			return calls, err
		}
	}
	return calls, nil
}

// listSlots returns the ids of the server's slots.
func (c *Client) listSlots(ctx context.Context, base string, h plan.ResetHook) ([]int, error) {
	actx, cancel := context.WithTimeout(ctx, attemptTimeout(h.Timeout))
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, base+"/slots", http.NoBody)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSlotsRead+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read the answer: %w", err)
	case resp.StatusCode != http.StatusOK:
		_, detail := readReply(resp.StatusCode, body, c.redact)
		return nil, fmt.Errorf("status %d %s: %s", resp.StatusCode, http.StatusText(resp.StatusCode), detail)
	case len(body) > maxSlotsRead:
		return nil, fmt.Errorf("the answer is larger than %d bytes", maxSlotsRead)
	}
	var slots []slot
	if err := json.Unmarshal(body, &slots); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON array of slots: %w", err)
	}
	return slotIDs(slots)
}

// slot is an entry of a GET /slots answer, of which only the id is read.
type slot struct {
	ID *int `json:"id"`
}

// slotIDs returns the ids of a slot listing: at least one and at most
// maxSlots, each present, not negative and listed once.
func slotIDs(slots []slot) ([]int, error) {
	if len(slots) == 0 {
		return nil, fmt.Errorf("the server lists no slots")
	}
	if len(slots) > maxSlots {
		return nil, fmt.Errorf("the server lists %d slots, more than the %d a reset erases (llama-server has "+
			"as many as its -np): not a slot list to trust", len(slots), maxSlots)
	}
	ids := make([]int, 0, len(slots))
	seen := make(map[int]bool, len(slots))
	for i, s := range slots {
		switch {
		case s.ID == nil:
			return nil, fmt.Errorf("slot %d of the answer has no id", i)
		case *s.ID < 0:
			return nil, fmt.Errorf("the answer is malformed: slot %d has a negative id (%d)", i, *s.ID)
		case seen[*s.ID]:
			return nil, fmt.Errorf("the answer is malformed: slot %d repeats the id %d of an earlier slot", i, *s.ID)
		}
		seen[*s.ID] = true
		ids = append(ids, *s.ID)
	}
	return ids, nil
}
