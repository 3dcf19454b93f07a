package sigv4

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// Credentials are what a request is signed with. Expires is zero for
// credentials that do not expire.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Expires                                    time.Time
	// Source says where they were read ("environment", "profile dev of
	// /home/u/.aws/credentials", ...), for the run's log; never a secret.
	Source string
}

// Secrets are the values that must never be shown: the secret key, the
// session token and the access key id.
func (c Credentials) Secrets() []string {
	var out []string
	for _, s := range []string{c.SecretAccessKey, c.SessionToken, c.AccessKeyID} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Limits of credential_process: its run time and its output.
const (
	processTimeout  = time.Minute
	maxProcessBytes = 1 << 20
	// maxFileBytes bounds a credentials or config file.
	maxFileBytes = 1 << 20
	// refreshBefore is how long before they expire credentials are read
	// again (AWS's SDKs refresh 10 to 15 minutes ahead).
	refreshBefore = 10 * time.Minute
)

// Chain reads credentials the way the AWS CLI does, in its order, for the
// sources built here: the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; not when a profile is named),
// then the profile (--aws-profile, else AWS_PROFILE, else default) of the
// shared credentials file (AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials)
// and of the config file (AWS_CONFIG_FILE, ~/.aws/config): its static keys
// or its credential_process. Expiring credentials are read again before
// they expire. Assume-role, SSO, web identity, container and instance roles
// are not read: such a profile is refused, naming how to export its
// credentials instead.
type Chain struct {
	Profile string              // --aws-profile ("" for the default)
	Getenv  func(string) string // os.Getenv when nil
	Now     func() time.Time    // time.Now when nil
	// OnRead, when set, is called with each set of credentials read (under
	// the chain's lock): the run hides their secrets from then on.
	OnRead func(Credentials)
	// Background, when set, is the context of refreshes read while the
	// credentials held have not yet expired: Get then returns them at once
	// and reads the next in the background (one read at a time), so that
	// a slow credential_process does not hold every request; Get waits
	// only for credentials it has none of, or whose time is up.
	Background context.Context

	mu         sync.Mutex
	got        Credentials
	refreshAt  time.Time // when got is read again (zero: never)
	refreshing bool      // a background read is under way
}

// Get returns credentials that have not expired, read again from
// refreshBefore before they expire (but at most once a minute, should they
// come back that close to it). Credentials read already expired are an
// error.
func (ch *Chain) Get(ctx context.Context) (Credentials, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	now := ch.now()
	held := ch.got.AccessKeyID != ""
	if held && (ch.refreshAt.IsZero() || now.Before(ch.refreshAt)) {
		return ch.got, nil
	}
	if held && ch.Background != nil && now.Before(ch.got.Expires) {
		if !ch.refreshing {
			ch.refreshing = true
			go ch.refresh()
		}
		return ch.got, nil
	}
	return ch.readLocked(ctx, now)
}

// readLocked reads credentials and holds them, under ch.mu.
func (ch *Chain) readLocked(ctx context.Context, now time.Time) (Credentials, error) {
	c, err := ch.read(ctx)
	if err != nil {
		return Credentials{}, err
	}
	if !c.Expires.IsZero() && !c.Expires.After(now) {
		return Credentials{}, fmt.Errorf("AWS credentials: %s gave credentials that expired at %s: renew them", c.Source, c.Expires.Format(time.RFC3339))
	}
	if ch.OnRead != nil {
		ch.OnRead(c)
	}
	ch.got, ch.refreshAt = c, refreshTime(c, now)
	return c, nil
}

// refresh reads the next credentials in the background. A failure keeps
// those held until they expire, tried again a minute later.
func (ch *Chain) refresh() {
	c, err := ch.read(ch.Background)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.refreshing = false
	now := ch.now()
	if err != nil || !c.Expires.IsZero() && !c.Expires.After(now) {
		ch.refreshAt = now.Add(time.Minute)
		return
	}
	if ch.OnRead != nil {
		ch.OnRead(c)
	}
	ch.got, ch.refreshAt = c, refreshTime(c, now)
}

// refreshTime is when credentials c, read at now, are read again: zero
// for credentials that do not expire, else refreshBefore before they
// expire, but not within a minute of now, nor after they expire.
func refreshTime(c Credentials, now time.Time) time.Time {
	if c.Expires.IsZero() {
		return time.Time{}
	}
	at := c.Expires.Add(-refreshBefore)
	if soonest := now.Add(time.Minute); at.Before(soonest) {
		at = soonest
	}
	if at.After(c.Expires) {
		at = c.Expires
	}
	return at
}

func (ch *Chain) now() time.Time {
	if ch.Now != nil {
		return ch.Now()
	}
	return time.Now()
}

func (ch *Chain) getenv(k string) string {
	if ch.Getenv != nil {
		return ch.Getenv(k)
	}
	return os.Getenv(k)
}

// read walks the chain once.
func (ch *Chain) read(ctx context.Context) (Credentials, error) {
	if ch.Profile == "" {
		id, secret := ch.getenv("AWS_ACCESS_KEY_ID"), ch.getenv("AWS_SECRET_ACCESS_KEY")
		switch {
		case id != "" && secret != "":
			return Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: ch.getenv("AWS_SESSION_TOKEN"), Source: "environment"}, nil
		case id != "" || secret != "":
			return Credentials{}, errors.New("AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither")
		}
	}
	name := ch.Profile
	if name == "" {
		name = cmp.Or(ch.getenv("AWS_PROFILE"), ch.getenv("AWS_DEFAULT_PROFILE"), "default")
	}
	credFile := ch.file("AWS_SHARED_CREDENTIALS_FILE", "credentials")
	confFile := ch.file("AWS_CONFIG_FILE", "config")
	creds, err := readINI(credFile)
	if err != nil {
		return Credentials{}, err
	}
	conf, err := readINI(confFile)
	if err != nil {
		return Credentials{}, err
	}
	confSection := conf["profile "+name]
	if name == "default" && confSection == nil {
		confSection = conf["default"]
	}
	for _, k := range []string{"role_arn", "sso_session", "sso_start_url", "web_identity_token_file", "credential_source"} {
		if confSection[k] != "" || creds[name][k] != "" {
			return Credentials{}, fmt.Errorf("AWS profile %s: its %s (assume-role, SSO or web identity) is not read here: "+
				"export its credentials first (eval \"$(aws configure export-credentials --profile %s --format env)\") and drop --aws-profile", name, k, name)
		}
	}
	if c, ok := staticKeys(creds[name], "profile "+name+" of "+credFile); ok {
		return c, nil
	}
	if cmd := confSection["credential_process"]; cmd != "" {
		return runProcess(ctx, cmd, "credential_process of profile "+name+" of "+confFile)
	}
	if c, ok := staticKeys(confSection, "profile "+name+" of "+confFile); ok {
		return c, nil
	}
	return Credentials{}, fmt.Errorf("no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give --aws-profile "+
		"a profile of %s with aws_access_key_id and aws_secret_access_key (profile %s has none); container and instance roles "+
		"are not read here: export them first (eval \"$(aws configure export-credentials --format env)\")", credFile, name)
}

// file is the path in env variable k, else ~/.aws/name.
func (ch *Chain) file(k, name string) string {
	if p := ch.getenv(k); p != "" {
		return p
	}
	home := ch.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".aws", name)
}

// staticKeys are a section's aws_access_key_id and aws_secret_access_key.
func staticKeys(sec map[string]string, source string) (Credentials, bool) {
	id, secret := sec["aws_access_key_id"], sec["aws_secret_access_key"]
	if id == "" || secret == "" {
		return Credentials{}, false
	}
	return Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: sec["aws_session_token"], Source: source}, true
}

// readINI reads an AWS config or credentials file into its sections' keys
// (a missing file has none). Values are taken as they are; a nested block
// (an indented key of a service section) is skipped.
func readINI(path string) (map[string]map[string]string, error) {
	b, err := inputfile.ReadFileMax(path, maxFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("AWS credentials: %w", err)
	}
	out := map[string]map[string]string{}
	var sec map[string]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), len(b)+1)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
		case strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]"):
			name := strings.Join(strings.Fields(trimmed[1:len(trimmed)-1]), " ")
			sec = map[string]string{}
			out[name] = sec
		case sec != nil && line[0] != ' ' && line[0] != '\t':
			if k, v, ok := strings.Cut(trimmed, "="); ok {
				sec[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out, sc.Err()
}

// runProcess runs a credential_process command (split on spaces, with
// double quotes kept together, as the AWS CLI splits it) and reads its
// version-1 JSON.
func runProcess(ctx context.Context, command, source string) (Credentials, error) {
	args := splitCommand(command)
	if len(args) == 0 {
		return Credentials{}, fmt.Errorf("AWS credentials: %s is empty", source)
	}
	ctx, cancel := context.WithTimeout(ctx, processTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var out bytes.Buffer
	lim := &limited{w: &out, left: maxProcessBytes, stop: cancel}
	cmd.Stdout = lim
	cmd.Stderr = os.Stderr
	// A child it leaves behind holding its output does not hold the run:
	// the wait for the output ends 2 s after the process did.
	cmd.WaitDelay = 2 * time.Second
	// ErrWaitDelay: it exited well, a child of its still holding its output.
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		if lim.over {
			err = fmt.Errorf("it printed more than %d bytes", maxProcessBytes)
		}
		return Credentials{}, fmt.Errorf("AWS credentials: run %s (%s): %w", source, args[0], err)
	}
	var v struct {
		Version                                   int
		AccessKeyID                               string `json:"AccessKeyId"`
		SecretAccessKey, SessionToken, Expiration string
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		return Credentials{}, fmt.Errorf("AWS credentials: %s did not print its JSON: %w", source, err)
	}
	if v.Version != 1 || v.AccessKeyID == "" || v.SecretAccessKey == "" {
		return Credentials{}, fmt.Errorf("AWS credentials: %s printed no Version 1, AccessKeyId and SecretAccessKey", source)
	}
	c := Credentials{AccessKeyID: v.AccessKeyID, SecretAccessKey: v.SecretAccessKey, SessionToken: v.SessionToken, Source: source}
	if v.Expiration != "" {
		t, err := time.Parse(time.RFC3339, v.Expiration)
		if err != nil {
			return Credentials{}, fmt.Errorf("AWS credentials: %s: Expiration %q is not an RFC 3339 time", source, v.Expiration)
		}
		c.Expires = t
	}
	return c, nil
}

// splitCommand splits a command line on spaces, keeping double-quoted
// runs together.
func splitCommand(s string) []string {
	var args []string
	var cur strings.Builder
	quoted, have := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, have = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

// limited writes at most left bytes to w, then fails (over set) and
// stops the process (stop), which would block on a full pipe otherwise.
type limited struct {
	w    *bytes.Buffer
	left int
	over bool
	stop func()
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.left {
		l.over = true
		l.stop()
		return 0, fmt.Errorf("more than %d bytes of output", maxProcessBytes)
	}
	l.left -= len(p)
	return l.w.Write(p)
}
