package sigv4

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is a fake environment: HOME points at dir, and vars are set.
func env(dir string, vars ...string) func(string) string {
	m := map[string]string{"HOME": dir}
	for i := 0; i+1 < len(vars); i += 2 {
		m[vars[i]] = vars[i+1]
	}
	return func(k string) string { return m[k] }
}

func write(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}

func TestChainEnvironmentThenProfiles(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".aws", "credentials"), "[default]\naws_access_key_id = AKDEF\naws_secret_access_key = sdef\n\n"+
		"[dev]\naws_access_key_id=AKDEV\naws_secret_access_key=sdev\naws_session_token=tdev\n")
	write(t, filepath.Join(dir, ".aws", "config"), "[profile cfg]\nregion = us-west-2\naws_access_key_id = AKCFG\naws_secret_access_key = scfg\n"+
		"s3 =\n  max_concurrent_requests = 20\n[profile role]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = dev\n")
	get := func(ch *Chain) (Credentials, error) { return ch.Get(context.Background()) }

	c, err := get(&Chain{Getenv: env(dir, "AWS_ACCESS_KEY_ID", "AKENV", "AWS_SECRET_ACCESS_KEY", "senv", "AWS_SESSION_TOKEN", "tenv")})
	require.NoError(t, err)
	assert.Equal(t, Credentials{AccessKeyID: "AKENV", SecretAccessKey: "senv", SessionToken: "tenv", Source: "environment"}, c)

	c, err = get(&Chain{Profile: "dev", Getenv: env(dir, "AWS_ACCESS_KEY_ID", "AKENV", "AWS_SECRET_ACCESS_KEY", "senv")})
	require.NoError(t, err)
	assert.Equal(t, "AKDEV", c.AccessKeyID, "a named profile wins over the environment, as in the AWS CLI")
	assert.Equal(t, "tdev", c.SessionToken)
	assert.Contains(t, c.Source, "profile dev of "+filepath.Join(dir, ".aws", "credentials"))

	c, err = get(&Chain{Getenv: env(dir)})
	require.NoError(t, err)
	assert.Equal(t, "AKDEF", c.AccessKeyID, "no variables, no profile: default")

	c, err = get(&Chain{Getenv: env(dir, "AWS_PROFILE", "cfg")})
	require.NoError(t, err)
	assert.Equal(t, "AKCFG", c.AccessKeyID, "AWS_PROFILE, from the config file")

	_, err = get(&Chain{Profile: "role", Getenv: env(dir)})
	assert.ErrorContains(t, err, "AWS profile role: its role_arn (assume-role, SSO or web identity) is not read here: export its credentials first")

	_, err = get(&Chain{Profile: "nope", Getenv: env(dir)})
	assert.ErrorContains(t, err, "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")

	_, err = get(&Chain{Getenv: env(t.TempDir(), "AWS_ACCESS_KEY_ID", "AKENV")})
	assert.ErrorContains(t, err, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together")
}

// credential_process is run (a real subprocess), its JSON read, and run
// again once its credentials come within refreshBefore of expiring (not
// before a minute has passed, should they come back that close); what it
// gives expired is an error, and every read is reported to OnRead.
func TestChainCredentialProcess(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	script := filepath.Join(dir, "creds helper.sh")
	t0 := time.Now()
	writeHelper := func(expires time.Time) {
		write(t, script, fmt.Sprintf("#!/bin/sh\necho run >> %q\n"+
			`echo '{"Version": 1, "AccessKeyId": "AKPROC", "SecretAccessKey": "sproc", "SessionToken": "tproc", "Expiration": "%s"}'`+"\n",
			runs, expires.UTC().Format(time.RFC3339)))
		require.NoError(t, os.Chmod(script, 0o755))
	}
	writeHelper(t0.Add(5 * time.Minute)) // inside the refresh margin
	write(t, filepath.Join(dir, "config"), fmt.Sprintf("[profile proc]\ncredential_process = \"%s\" --flag\n", script))
	now := t0
	var read []string
	ch := &Chain{Profile: "proc", Getenv: env(dir, "AWS_CONFIG_FILE", filepath.Join(dir, "config")), Now: func() time.Time { return now },
		OnRead: func(c Credentials) { read = append(read, c.SessionToken) }}
	count := func() int {
		b, err := os.ReadFile(runs)
		require.NoError(t, err)
		return strings.Count(string(b), "run")
	}
	for _, at := range []time.Duration{0, 30 * time.Second} {
		now = t0.Add(at)
		c, err := ch.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "AKPROC", c.AccessKeyID)
		assert.Equal(t, "tproc", c.SessionToken)
	}
	assert.Equal(t, 1, count(), "not run again within a minute")
	now = t0.Add(61 * time.Second)
	_, err := ch.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, count(), "run again once a minute has passed, the credentials still within the margin")
	assert.Equal(t, []string{"tproc", "tproc"}, read)

	writeHelper(t0.Add(-time.Minute))
	_, err = (&Chain{Profile: "proc", Getenv: env(dir, "AWS_CONFIG_FILE", filepath.Join(dir, "config"))}).Get(context.Background())
	assert.ErrorContains(t, err, "gave credentials that expired at")

	write(t, filepath.Join(dir, "config"), "[profile proc]\ncredential_process = /bin/echo not-json\n")
	_, err = (&Chain{Profile: "proc", Getenv: env(dir, "AWS_CONFIG_FILE", filepath.Join(dir, "config"))}).Get(context.Background())
	assert.ErrorContains(t, err, "did not print its JSON")
}

// A credential_process that leaves a child holding its output, or prints
// without end, is ended; a config file that is not a regular file, or too
// large, is refused without reading it through.
func TestChainHostileSources(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	get := func() error {
		_, err := (&Chain{Profile: "p", Getenv: env(dir, "AWS_CONFIG_FILE", cfg)}).Get(context.Background())
		return err
	}
	write(t, cfg, "[profile p]\ncredential_process = /bin/sh -c \"sleep 20 2>/dev/null & echo '{}'\"\n")
	assert.ErrorContains(t, get(), "printed no Version 1", "the child left running does not hold the read")
	write(t, cfg, "[profile p]\ncredential_process = /bin/sh -c \"yes\"\n")
	assert.ErrorContains(t, get(), "printed more than 1048576 bytes")
	require.NoError(t, os.Remove(cfg))
	require.NoError(t, syscall.Mkfifo(cfg, 0o600))
	assert.ErrorContains(t, get(), "not a regular file")
	require.NoError(t, os.Remove(cfg))
	write(t, cfg, "[profile p]\n"+strings.Repeat("x", 2<<20))
	assert.ErrorContains(t, get(), cfg+" is larger than 1 MiB")
}

func TestSplitCommand(t *testing.T) {
	assert.Equal(t, []string{"/opt/my tool", "--a", "b"}, splitCommand(`"/opt/my tool"  --a b`))
	assert.Empty(t, splitCommand("  "))
}

// With a Background context, credentials due for refresh but not expired
// are returned at once while the next are read in the background (one
// read at a time): a slow credential_process holds no request. Until the
// read ends, the held credentials serve.
func TestChainRefreshesInTheBackground(t *testing.T) {
	dir := t.TempDir()
	runs, gate := filepath.Join(dir, "runs"), filepath.Join(dir, "gate")
	script := filepath.Join(dir, "helper.sh")
	t0 := time.Now()
	// Each run waits for the gate (up to 20 s), then gives a token named by
	// its run's number.
	write(t, script, fmt.Sprintf("#!/bin/sh\necho start >> %[1]q\nn=$(grep -c start %[1]q)\ni=0\n"+
		"while [ ! -e %[2]q ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done\necho end >> %[1]q\n"+
		`echo '{"Version": 1, "AccessKeyId": "AK", "SecretAccessKey": "s", "SessionToken": "t'$n'", "Expiration": "%[3]s"}'`+"\n",
		runs, gate, t0.Add(5*time.Minute).UTC().Format(time.RFC3339)))
	require.NoError(t, os.Chmod(script, 0o755))
	write(t, filepath.Join(dir, "config"), fmt.Sprintf("[profile proc]\ncredential_process = %s\n", script))
	write(t, gate, "")
	now := t0
	ch := &Chain{Profile: "proc", Getenv: env(dir, "AWS_CONFIG_FILE", filepath.Join(dir, "config")), Background: context.Background()}
	ch.Now = func() time.Time { return now }
	c, err := ch.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "t1", c.SessionToken)

	require.NoError(t, os.Remove(gate))
	now = t0.Add(61 * time.Second) // past the refresh time, before the expiry
	c, err = ch.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "t1", c.SessionToken, "the held credentials, at once")
	b, err := os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), "end"), "Get did not wait for the second run, which waits at the gate")

	write(t, gate, "")
	for c.SessionToken != "t2" { // until the background read is held
		c, err = ch.Get(context.Background())
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	b, err = os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(b), "start"), "one background read, however many Gets")
}
