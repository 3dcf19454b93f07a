package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// ResolveTimeout bounds, in total, the name lookups that tell which server
// lanes load one server (ServerLanes): a name not resolved by then keeps
// its lane by its spelling.
const ResolveTimeout = 2 * time.Second

// lookupFunc resolves a host name to its addresses (net.DefaultResolver's
// LookupIPAddr, or a test's).
type lookupFunc func(ctx context.Context, host string) ([]net.IPAddr, error)

// serverIDs maps each normalised server (plan.Profile.Servers) to what
// identifies the machine and port it reaches: its own spelling, and
// scheme://address:port for each address its host resolves to, every
// loopback and unspecified address (0.0.0.0 and [::] reach this machine
// too) spelled localhost. Two servers are one when their identities meet.
type serverIDs map[string][]string

// resolveServers identifies servers, looking up the host names among them
// at once within ResolveTimeout in total; it returns a note for each name
// that did not resolve (kept by its spelling).
func resolveServers(ctx context.Context, servers []string, lookup lookupFunc) (serverIDs, []string) {
	ctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	ids := make(serverIDs, len(servers))
	notes := make([]string, len(servers))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, srv := range servers {
		u, err := url.Parse(srv)
		if err != nil || u.Host == "" {
			mu.Lock()
			ids[srv] = []string{srv}
			mu.Unlock()
			continue
		}
		host, port := strings.ToLower(u.Hostname()), u.Port()
		id := func(h string) string { return u.Scheme + "://" + net.JoinHostPort(h, port) }
		if ip := net.ParseIP(host); ip != nil || host == "localhost" {
			mu.Lock() // the lookups below write ids too
			ids[srv] = []string{srv, id(addressID(ip))}
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			addrs, err := lookup(ctx, host)
			mu.Lock()
			defer mu.Unlock()
			own := []string{srv}
			if err != nil || len(addrs) == 0 {
				why := "no address"
				if err != nil {
					why = err.Error()
				}
				notes[i] = fmt.Sprintf("host %s did not resolve within %s (%s): its cells' lane is kept by the name's spelling", host, ResolveTimeout, why)
			}
			for _, a := range addrs {
				if k := id(addressID(a.IP)); !slices.Contains(own, k) {
					own = append(own, k)
				}
			}
			ids[srv] = own
		})
	}
	wg.Wait()
	return ids, slices.DeleteFunc(notes, func(n string) bool { return n == "" })
}

// addressID is how an address identifies its machine: localhost for this
// one (a loopback or unspecified address, or the name localhost), else the
// address as Go prints it.
func addressID(ip net.IP) string {
	if ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
		return "localhost"
	}
	return ip.String()
}

// ServerLanes are the sweep's server lanes (plan.Sweep.Lanes), with the
// lanes whose servers are one machine's port merged: a server spelt
// 0.0.0.0 or [::] is this machine's loopback, as localhost is, and a host
// name is one with every address it resolves to (looked up now, within
// ResolveTimeout in total). The notes say which lanes were merged and
// which names did not resolve (kept by their spelling).
func ServerLanes(ctx context.Context, sw plan.Sweep) ([]plan.Lane, []string) {
	lanes, _, notes := serverLanes(ctx, sw, net.DefaultResolver.LookupIPAddr)
	return lanes, notes
}

// serverLanes is ServerLanes with lookup, also returning the identities of
// the sweep's servers.
func serverLanes(ctx context.Context, sw plan.Sweep, lookup lookupFunc) ([]plan.Lane, serverIDs, []string) {
	lanes := sw.Lanes()
	var servers []string
	for _, l := range lanes {
		servers = append(servers, l.Servers...)
	}
	if len(lanes) <= 1 {
		ids, _ := resolveServers(ctx, servers, noLookup)
		return lanes, ids, nil
	}
	ids, notes := resolveServers(ctx, servers, lookup)
	merged := sw.LanesBy(func(srv string) []string { return ids[srv] })
	// A lane of the spelling's that is not a lane of its own any more was
	// joined to another: say which.
	for _, m := range merged {
		var parts []string
		for _, l := range lanes {
			if len(l.Servers) > 0 && slices.Contains(m.Servers, l.Servers[0]) {
				parts = append(parts, strings.Join(l.Servers, " + "))
			}
		}
		if len(parts) > 1 {
			notes = append(notes, fmt.Sprintf("%s reach one server: their cells share a lane, one trial at a time",
				strings.Join(parts, " and ")))
		}
	}
	return merged, ids, notes
}

// noLookup resolves no name: a name is then its own spelling only.
func noLookup(context.Context, string) ([]net.IPAddr, error) {
	return nil, errNoLookup
}

var errNoLookup = errors.New("not looked up")

// meet reports whether two lists of normalised servers share a server
// under ids (a server ids does not know is its own spelling).
func (ids serverIDs) meet(a, b []string) bool {
	of := func(srv string) []string {
		if own, ok := ids[srv]; ok {
			return own
		}
		return []string{srv}
	}
	for _, x := range a {
		for _, y := range b {
			if slices.ContainsFunc(of(x), func(id string) bool { return slices.Contains(of(y), id) }) {
				return true
			}
		}
	}
	return false
}
