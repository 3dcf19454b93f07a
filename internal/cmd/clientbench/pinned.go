package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

var (
	pinnedLevels   = []int{1, 64, 256}
	pinnedRequests = 20000
	pinnedRounds   = 5
	// clientWrap and serverWrap prefix the pinned processes' command
	// lines (e.g. "strace -c -f -o /tmp/{client}-{c}.strace"), {client}
	// and {c} replaced by the client's name and the concurrency.
	clientWrap, serverWrap string
	pinnedITL              time.Duration
	pinnedCC               string   // the neutral server's TCP congestion control ("system": the system's)
	pinnedExtra            []string // more clients of the pinned measurement
)

// pinnedFlags defines the flags of the pinned measurement and of its
// processes (-role), returning the latter's role, concurrency and count.
func pinnedFlags() (role *string, c, n *int) {
	flag.Func("pinned", "comma-separated concurrency levels of the pinned measurement (default 1,64,256; empty: none)",
		func(v string) error { return parseList(v, &pinnedLevels) })
	flag.IntVar(&pinnedRequests, "pinned-requests", pinnedRequests, "requests per run of the pinned measurement")
	flag.Func("pinned-rounds", "rounds of the pinned measurement, each running every client once (medians and verdicts over them; at least 2, default 5)",
		func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 2 {
				return fmt.Errorf("want a whole number of at least 2 (a verdict needs the spread of two rounds), got %q", v)
			}
			pinnedRounds = n
			return nil
		})
	flag.StringVar(&clientWrap, "pinned-client-wrap", "", "a command prefixing each pinned client's, after taskset: {client} and {c} "+
		"name the client and the concurrency (e.g. \"strace -c -f -o /tmp/{client}-{c}.strace\"; the CPU figures are then the wrapper's)")
	flag.StringVar(&serverWrap, "pinned-server-wrap", "", "a command prefixing the pinned neutral server's, after taskset (as -pinned-client-wrap)")
	flag.DurationVar(&pinnedITL, "pinned-itl", 0, "the pinned neutral server's gap between content chunks (0: none, as fast as it can)")
	flag.StringVar(&pinnedCC, "pinned-cc", "cubic", "the pinned neutral server's TCP congestion control (TCP_CONGESTION on its listener; "+
		"system: the system's, net.ipv4.tcp_congestion_control). Linux's default, cubic, by default: under bbr, whose window on "+
		"loopback is about 16 segments, a client that acknowledges late makes the server's writes merge and cost it less")
	flag.Func("pinned-extra", "more clients of the pinned measurement, comma-separated: aiperf-rxN (aiperf with --rx-coalesce-usecs N, e.g. aiperf-rx0), aiperf@BINARY (another build of aiperf), "+
		"endpoint (aiperf's HTTP client alone), "+
		"minimal-nojson (the minimal client without decoding), minimal-32k (with a 32 KiB transport read buffer), "+
		"minimal-headers (sending aiperf's headers)",
		func(v string) error {
			pinnedExtra = strings.FieldsFunc(v, func(r rune) bool { return r == ',' })
			return nil
		})
	flag.Func("callgrind", "comma-separated concurrency levels of the instruction counts per request under valgrind (default none)",
		func(v string) error { return parseList(v, &callgrindLevels) })
	flag.BoolVar(&minimalDecode, "decode", true, "internal: the minimal client decodes each chunk")
	flag.IntVar(&minimalReadBuffer, "rbuf", 0, "internal: the minimal client's transport ReadBufferSize")
	flag.BoolVar(&minimalHeaders, "headers", false, "internal: the minimal client sends aiperf's headers")
	role = flag.String("role", "", "internal: run as a process of the pinned measurement: server, minimal or endpoint")
	c = flag.Int("c", 1, "internal: the client's concurrency")
	n = flag.Int("n", 1000, "internal: the client's requests")
	return role, c, n
}

// runRole runs one of the processes of the pinned measurement.
func runRole(role, url string, c, n int) error {
	switch role {
	case "server":
		return serveNeutral(pinnedITL, pinnedCC)
	case "minimal":
		return runMinimal(url, c, n)
	case "endpoint":
		return runEndpoint(url, c, n)
	}
	return fmt.Errorf("unknown role %q (server, minimal or endpoint)", role)
}

// wrapped is args prefixed with wrap's words, placeholders filled in.
func wrapped(wrap, client string, c int, args ...string) []string {
	r := strings.NewReplacer("{client}", client, "{c}", strconv.Itoa(c))
	var out []string
	for _, w := range strings.Fields(wrap) {
		out = append(out, r.Replace(w))
	}
	return append(out, args...)
}

// pinnedClient is one of the clients measured on a core of its own.
type pinnedClient struct {
	name string
	// args is the client's command line against url at concurrency c for n
	// requests; dir is a scratch directory.
	args func(url, dir string, c, n int) ([]string, error)
}

// pinnedFigures are one measurement's figures per request (in the middle
// 80% of its requests, except procCPU).
type pinnedFigures struct {
	reqPerSec float64
	clientCPU float64 // ms of the client's CPU per request
	serverCPU float64 // ms of the server's CPU per request
	segments  float64 // loopback TCP segments (InSegs+OutSegs) per request
	procCPU   float64 // ms of the client process's whole CPU (start-up and exports included) per request
	// detail is, per request: the client's user and system CPU ms, page
	// faults, context switches, read and write calls; the server's user and
	// system CPU ms, context switches and read calls; the segments the
	// server's connections sent (with data) and received (with data),
	// counted on the connections open at both ends of the window; and the
	// connections it accepted per 1,000 requests; the client's mean
	// turnaround: from a reply's end to the next request on its connection;
	// the µs the server's connections had data unacknowledged, the tail
	// loss probes its TCP fired per 1,000 requests, and at the window's end
	// its connections' mean congestion window, unsent bytes and pacing
	// rate (MB/s).
	detail [22]float64
}

// detailHeader heads the columns of pinnedFigures.detail.
const detailHeader = "client user ms\tsys ms\tpage faults\tswitches\treads\twrites\tserver user ms\tsys ms\tswitches\treads\twrites\tsegments out\twith data\tsegments in\twith data\tconnections per 1,000\tturnaround µs\tunacked µs\tloss probes per 1,000\tserver cwnd\tunsent bytes\tpacing MB/s\t"

// pinnedClients are the clients the pinned measurement can run: aiperf
// and the minimal client always, the others when -pinned-extra names them.
func pinnedClients(self, aiperf string) map[string]pinnedClient {
	role := func(name, role string, extra ...string) pinnedClient {
		return pinnedClient{name, func(url, _ string, c, n int) ([]string, error) {
			return append([]string{self, "-role", role, "-url", url, "-c", strconv.Itoa(c), "-n", strconv.Itoa(n)}, extra...), nil
		}}
	}
	all := map[string]pinnedClient{
		"aiperf":          aiperfClient("aiperf", aiperf, rxUsecs),
		"minimal":         role("minimal", "minimal"),
		"endpoint":        role("endpoint", "endpoint"),
		"minimal-nojson":  role("minimal-nojson", "minimal", "-decode=false"),
		"minimal-32k":     role("minimal-32k", "minimal", "-rbuf", "32768"),
		"minimal-headers": role("minimal-headers", "minimal", "-headers"),
	}
	return all
}

// aiperfClient is aiperf profile as a pinned client, with
// --rx-coalesce-usecs rx (aiperf's default if rx < 0).
func aiperfClient(name, aiperf string, rx int) pinnedClient {
	return pinnedClient{name, func(url, dir string, c, n int) ([]string, error) {
		args := []string{aiperf, "profile", "--model", "mock-model", "--url", url, "--endpoint-type", "chat", "--streaming",
			"--concurrency", strconv.Itoa(c), "--request-count", strconv.Itoa(n), "--synthetic-input-tokens-mean", "64",
			"--output-tokens-mean", strconv.Itoa(neutralTokens), "--no-store", "--no-server-metrics", "--ui", "none",
			"--artifact-dir", dir}
		if rx >= 0 {
			args = append(args, "--rx-coalesce-usecs", strconv.Itoa(rx))
		}
		return args, nil
	}}
}

// measuredClients returns this binary's path and the clients to measure:
// aiperf, the minimal client and the -pinned-extra ones.
func measuredClients() (self string, clients []pinnedClient, err error) {
	aiperf, err := filepath.Abs(aiperfBin)
	if err != nil {
		return "", nil, err
	}
	if self, err = os.Executable(); err != nil {
		return "", nil, err
	}
	all := pinnedClients(self, aiperf)
	clients = []pinnedClient{all["aiperf"], all["minimal"]}
	for _, name := range pinnedExtra {
		cl, ok := all[name]
		if n, found := strings.CutPrefix(name, "aiperf-rx"); !ok && found {
			if rx, err := strconv.Atoi(n); err == nil && rx >= 0 {
				cl, ok = aiperfClient(name, aiperf, rx), true
			}
		}
		if bin, found := strings.CutPrefix(name, "aiperf@"); !ok && found && bin != "" {
			cl, ok = aiperfClient("aiperf@"+filepath.Base(bin), bin, rxUsecs), true
		}
		if !ok {
			return "", nil, fmt.Errorf("-pinned-extra: no client %q (aiperf-rxN, aiperf@BINARY, endpoint, minimal-nojson, minimal-32k or minimal-headers)", name)
		}
		clients = append(clients, cl)
	}
	return self, clients, nil
}

// pinned measures aiperf and the minimal client (and the -pinned-extra
// clients), each on a core of its own with the neutral server on the
// other, at each of pinnedLevels: req/s, the client's and the server's CPU
// time per request and the loopback TCP segments per request, median of
// pinnedRounds runs each, the clients' order rotating between rounds; then
// the verdicts of the paired ratios (printVerdicts).
func pinned() error {
	if len(pinnedLevels) == 0 {
		return nil
	}
	if why := pinnable(); why != "" {
		fmt.Printf("pinned measurement skipped: %s\n\n", why)
		return nil
	}
	self, clients, err := measuredClients()
	if err != nil {
		return err
	}
	netns := "in a network namespace of its own"
	if !privateNetns() {
		netns = "in the host's network namespace: other loopback traffic inflates the segment counts"
	}
	server := "as fast as it can"
	if pinnedITL > 0 {
		server = fmt.Sprintf("%v apart", pinnedITL)
	}
	fmt.Printf("pinned: the neutral SSE server (%d one-token chunks per reply, %s, TCP congestion control %s) on CPU 0, each client on CPU 1,\n"+
		"%d requests per run, figures over the middle 80%% of each run's requests, median of %d runs, %s\n",
		neutralTokens, server, congestionControl(pinnedCC), pinnedRequests, pinnedRounds, netns)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concurrency\treq/s aiperf\tminimal\tratio\tclient CPU ms/req aiperf\tminimal\tratio\t"+
		"server CPU ms/req aiperf\tminimal\tratio\tTCP segments/req aiperf\tminimal\twhole-process CPU ms/req aiperf\tminimal\t")
	var details []string
	var judged []levelRuns
	for _, c := range pinnedLevels {
		runs := make([][]pinnedFigures, len(clients))
		for r := range pinnedRounds {
			for i := range clients {
				k := (r + i) % len(clients)
				f, err := pinnedRun(self, clients[k], c, pinnedRequests)
				if err != nil {
					return fmt.Errorf("pinned %s at concurrency %d: %w", clients[k].name, c, err)
				}
				runs[k] = append(runs[k], f)
			}
		}
		med := make([]pinnedFigures, len(clients))
		for k := range clients {
			med[k] = medianFigures(runs[k])
			line := fmt.Sprintf("%d\t%s\t%.0f\t%.3f\t%.1f\t", c, clients[k].name, med[k].reqPerSec, med[k].serverCPU, med[k].segments)
			for _, v := range med[k].detail {
				line += fmt.Sprintf("%.3f\t", v)
			}
			details = append(details, line)
		}
		for k, cl := range clients {
			if k != 1 && strings.HasPrefix(cl.name, "aiperf") {
				judged = append(judged, levelRuns{c, cl.name, runs[k], runs[1]})
			}
		}
		a, m := med[0], med[1]
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.2f×\t%.3f\t%.3f\t%.2f×\t%.3f\t%.3f\t%.2f×\t%.1f\t%.1f\t%.3f\t%.3f\t\n", c,
			a.reqPerSec, m.reqPerSec, a.reqPerSec/m.reqPerSec, a.clientCPU, m.clientCPU, a.clientCPU/m.clientCPU,
			a.serverCPU, m.serverCPU, a.serverCPU/m.serverCPU, a.segments, m.segments, a.procCPU, m.procCPU)
	}
	tw.Flush()
	fmt.Println()
	printVerdicts(os.Stdout, judged)
	fmt.Println("\nper request, in the same windows (medians):")
	tw = tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concurrency\tclient\treq/s\tserver CPU ms\tTCP segments\t"+detailHeader)
	for _, l := range details {
		fmt.Fprintln(tw, l)
	}
	tw.Flush()
	fmt.Println()
	return nil
}

// medianFigures is the median of each figure.
func medianFigures(fs []pinnedFigures) pinnedFigures {
	col := func(get func(pinnedFigures) float64) float64 {
		xs := make([]float64, len(fs))
		for i, f := range fs {
			xs[i] = get(f)
		}
		return median(xs)
	}
	m := pinnedFigures{
		reqPerSec: col(func(f pinnedFigures) float64 { return f.reqPerSec }),
		clientCPU: col(func(f pinnedFigures) float64 { return f.clientCPU }),
		serverCPU: col(func(f pinnedFigures) float64 { return f.serverCPU }),
		segments:  col(func(f pinnedFigures) float64 { return f.segments }),
		procCPU:   col(func(f pinnedFigures) float64 { return f.procCPU }),
	}
	for i := range m.detail {
		m.detail[i] = col(func(f pinnedFigures) float64 { return f.detail[i] })
	}
	return m
}

// pinnable says why the pinned measurement cannot run here ("" if it can).
func pinnable() string {
	switch {
	case runtime.GOOS != "linux":
		return "it needs Linux (taskset, /proc)"
	case runtime.NumCPU() < 2:
		return "it needs two CPUs"
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return "taskset is not installed"
	}
	return ""
}

// pinnedSample is what is read at each end of a measurement's window.
type pinnedSample struct {
	at                   time.Time
	served               int64
	server, client       procCounters
	inSegs, outSegs      int64
	lossProbes           int64
	conn                 connSegments // the server's connections' own counts
	accepted             int64        // connections the server accepted
	turns, turnUS        int64        // the server's count and µs of idle-to-active turns
	serverPID, clientPID int
}

// pinnedRun starts a fresh neutral server on CPU 0 and the client on CPU 1
// and measures the window between the server's n/10th and 9n/10th reply.
func pinnedRun(self string, cl pinnedClient, c, n int) (pinnedFigures, error) {
	dir, err := os.MkdirTemp("", "clientbench-pinned-")
	if err != nil {
		return pinnedFigures{}, err
	}
	defer os.RemoveAll(dir)
	srv := exec.Command("taskset", append([]string{"-c", "0"}, wrapped(serverWrap, cl.name, c, self, "-role", "server",
		"-pinned-itl", pinnedITL.String(), "-pinned-cc", pinnedCC)...)...)
	url, control, stop, err := startServer(srv)
	if err != nil {
		return pinnedFigures{}, err
	}
	defer stop()
	args, err := cl.args(url, dir, c, n)
	if err != nil {
		return pinnedFigures{}, err
	}
	cli := exec.Command("taskset", append([]string{"-c", "1"}, wrapped(clientWrap, cl.name, c, args...)...)...)
	var log strings.Builder
	cli.Stdout, cli.Stderr = &log, &log
	if err := cli.Start(); err != nil {
		return pinnedFigures{}, fmt.Errorf("start %s: %w", cl.name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cli.Wait() }()
	s := pinnedSample{serverPID: srv.Process.Pid, clientPID: cli.Process.Pid}
	var a, b pinnedSample
	for a.at.IsZero() || b.at.IsZero() {
		select {
		case err := <-exited:
			return pinnedFigures{}, fmt.Errorf("%s ended before the window closed: %v\n%s", cl.name, err, log.String())
		case <-time.After(50 * time.Millisecond):
		}
		x, err := s.read(control)
		if err != nil {
			return pinnedFigures{}, err
		}
		switch {
		case a.at.IsZero() && x.served >= int64(n/10):
			a = x
		case !a.at.IsZero() && x.served >= int64(n*9/10):
			b = x
		}
	}
	if err := <-exited; err != nil {
		return pinnedFigures{}, fmt.Errorf("%s: %v\n%s", cl.name, err, log.String())
	}
	ru := cli.ProcessState.SysUsage().(*syscall.Rusage)
	proc := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	reqs := float64(b.served - a.served)
	cd, sv := b.client.minus(a.client), b.server.minus(a.server)
	ms := func(ticks int64) float64 { return float64(ticks) * 1e3 / clockTicks / reqs }
	per := func(n int64) float64 { return float64(n) / reqs }
	return pinnedFigures{
		reqPerSec: reqs / b.at.Sub(a.at).Seconds(),
		clientCPU: ms(cd.user + cd.sys),
		serverCPU: ms(sv.user + sv.sys),
		segments:  per(b.inSegs - a.inSegs + b.outSegs - a.outSegs),
		procCPU:   float64(proc.Microseconds()) / 1e3 / float64(n),
		detail: [...]float64{ms(cd.user), ms(cd.sys), per(cd.faults), per(cd.switches), per(cd.reads), per(cd.writes),
			ms(sv.user), ms(sv.sys), per(sv.switches), per(sv.reads), per(sv.writes),
			per(b.conn.out - a.conn.out), per(b.conn.dataOut - a.conn.dataOut), per(b.conn.in - a.conn.in), per(b.conn.dataIn - a.conn.dataIn),
			1000 * per(b.accepted-a.accepted), float64(b.turnUS-a.turnUS) / float64(max(1, b.turns-a.turns)),
			per(b.conn.unackedUS - a.conn.unackedUS), 1000 * per(b.lossProbes-a.lossProbes),
			float64(b.conn.cwnd) / float64(max(1, b.conn.conns)), float64(b.conn.unsent) / float64(max(1, b.conn.conns)),
			float64(b.conn.pacing) / 1e6 / float64(max(1, b.conn.conns))},
	}, nil
}

// startServer starts the neutral server command (its arguments in
// srv.Args) and returns its URL, its control URL and its stop: closing its
// stdin, which ends it (and lets a -pinned-server-wrap such as strace print
// its summary), or killing it if it is still there after a while.
func startServer(srv *exec.Cmd) (url, control string, stop func(), err error) {
	in, err := srv.StdinPipe()
	if err != nil {
		return "", "", nil, err
	}
	out, err := srv.StdoutPipe()
	if err != nil {
		return "", "", nil, err
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return "", "", nil, fmt.Errorf("start the neutral server: %w", err)
	}
	stop = func() { in.Close(); stopServer(srv) }
	br := bufio.NewReader(out)
	url, err = br.ReadString('\n')
	if err == nil {
		control, err = br.ReadString('\n')
	}
	if err != nil {
		stop()
		return "", "", nil, fmt.Errorf("the neutral server did not start: %w", err)
	}
	return strings.TrimSpace(url), strings.TrimSpace(control), stop, nil
}

// stopServer waits for the server to end, killing it after a while.
func stopServer(srv *exec.Cmd) {
	done := make(chan struct{})
	go func() { _ = srv.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = srv.Process.Kill()
		<-done
	}
}

// read samples the server's reply count, both processes' counters and the
// server's network namespace's TCP segment counters.
func (s pinnedSample) read(control string) (pinnedSample, error) {
	x := s
	resp, err := http.Get(control + "/count")
	if err != nil {
		return x, fmt.Errorf("ask the neutral server its count: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return x, err
	}
	x.at = time.Now()
	if _, err := fmt.Sscan(string(b), &x.served, &x.accepted, &x.conn.in, &x.conn.dataIn, &x.conn.out, &x.conn.dataOut,
		&x.turns, &x.turnUS, &x.conn.unackedUS, &x.conn.cwnd, &x.conn.unsent, &x.conn.pacing, &x.conn.conns); err != nil {
		return x, fmt.Errorf("the neutral server's count %q: %w", b, err)
	}
	if x.server, err = readProc(s.serverPID); err != nil {
		return x, err
	}
	if x.client, err = readProc(s.clientPID); err != nil {
		return x, err
	}
	if x.inSegs, x.outSegs, err = tcpSegments(s.serverPID); err != nil {
		return x, err
	}
	x.lossProbes, err = lossProbes(s.serverPID)
	return x, err
}
