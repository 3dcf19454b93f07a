package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestRefusedCredentialsSayWhatToDo: a server that wants an API key answers
// every request 401; the run fails (exit 1) and its console says what to do,
// give the key when none was sent, check it when a wrong one was, instead
// of a bare 'HTTPError 401: Unauthorized'.
func TestRefusedCredentialsSayWhatToDo(t *testing.T) {
	m := startMock(t, mock.Config{APIKey: "sk-right-key"})
	check := "The server refused the credentials the requests carried (HTTP 401 or 403): check the key given with " +
		"--api-key (or the -H header, or --auth-type's signing) against the one the server expects."
	for _, tc := range []struct {
		name, url string
		extra     []string
		want      string
	}{
		{"no key", m.URL, nil, "The server refused the requests, sent without credentials (HTTP 401 or 403): give its API key " +
			"with --api-key KEY (sent as Authorization: Bearer KEY), or the header it expects with -H 'Name: value'."},
		{"wrong key", m.URL, []string{"--api-key", "sk-wrong-key"}, check},
		{"password in the url", strings.Replace(m.URL, "://", "://alice:sk-wrong-key@", 1), nil, check},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := cli(t, "", quick(tc.url, append([]string{"--request-count", "3"}, tc.extra...)...)...)
			require.Equal(t, 1, res.code, res.stderr)
			assert.Contains(t, res.stdout, "HTTPError 401")
			assert.Contains(t, res.stdout, tc.want)
			assert.NotContains(t, res.stdout+res.stderr, "sk-wrong-key")
		})
	}
	ok := cli(t, "", quick(m.URL, "--request-count", "3", "--api-key", "sk-right-key")...)
	require.Equal(t, 0, ok.code, ok.stderr)
	assert.NotContains(t, ok.stdout, "refused")
}

// TestChatRefusedCredentialsSayWhatToDo: aiperf chat, the sanity check of
// an endpoint's API key, says what to do about a 401 as profile does: give
// the key when none was sent ($OPENAI_API_KEY unset), check it when one was.
func TestChatRefusedCredentialsSayWhatToDo(t *testing.T) {
	m := startMock(t, mock.Config{APIKey: "sk-right-key"})
	none := runChat(t, "hi\n", nil, "-m", "m", "--url", m.URL)
	assert.Equal(t, ExitFailure, none.code, none.stderr)
	assert.Contains(t, none.stderr, "HTTPError (HTTP 401)")
	assert.Contains(t, none.stderr, "): the server wants credentials and none were sent: give "+
		"its API key with --api-key KEY (or $OPENAI_API_KEY)")
	wrong := runChat(t, "hi\n", []string{"OPENAI_API_KEY=sk-wrong-key"}, "-m", "m", "--url", m.URL)
	assert.Equal(t, ExitFailure, wrong.code, wrong.stderr)
	assert.Contains(t, wrong.stderr, "): the server refused the credentials sent: check the key "+
		"given with --api-key (or $OPENAI_API_KEY, or the URL's user and password)")
	assert.NotContains(t, wrong.stdout+wrong.stderr, "sk-wrong-key")
	right := runChat(t, "hi\n", []string{"OPENAI_API_KEY=sk-right-key"}, "-m", "m", "--url", m.URL)
	assert.Equal(t, 0, right.code, right.stderr)
}
