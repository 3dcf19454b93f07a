package sigv4

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// again once its credentials are about to expire.
func TestChainCredentialProcess(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	script := filepath.Join(dir, "creds helper.sh")
	expires := time.Now().Add(5 * time.Minute).UTC().Format(time.RFC3339) // inside the refresh margin
	write(t, script, fmt.Sprintf("#!/bin/sh\necho run >> %q\n"+
		`echo '{"Version": 1, "AccessKeyId": "AKPROC", "SecretAccessKey": "sproc", "SessionToken": "tproc", "Expiration": "%s"}'`+"\n", runs, expires))
	require.NoError(t, os.Chmod(script, 0o755))
	write(t, filepath.Join(dir, "config"), fmt.Sprintf("[profile proc]\ncredential_process = \"%s\" --flag\n", script))
	ch := &Chain{Profile: "proc", Getenv: env(dir, "AWS_CONFIG_FILE", filepath.Join(dir, "config"))}
	for range 2 {
		c, err := ch.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "AKPROC", c.AccessKeyID)
		assert.Equal(t, "tproc", c.SessionToken)
	}
	b, err := os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(b), "run"), "credentials that expire within the margin are read again")

	write(t, filepath.Join(dir, "config"), "[profile proc]\ncredential_process = /bin/echo not-json\n")
	_, err = (&Chain{Profile: "proc", Getenv: env(dir, "AWS_CONFIG_FILE", filepath.Join(dir, "config"))}).Get(context.Background())
	assert.ErrorContains(t, err, "did not print its JSON")
}

func TestSplitCommand(t *testing.T) {
	assert.Equal(t, []string{"/opt/my tool", "--a", "b"}, splitCommand(`"/opt/my tool"  --a b`))
	assert.Empty(t, splitCommand("  "))
}
