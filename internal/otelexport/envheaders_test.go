package otelexport

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckEnvHeaders: each entry the SDK would drop without a word is
// refused, naming the variable, the entry's place and (when it is one) its
// key, never the value; what the SDK sends as meant passes.
func TestCheckEnvHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, env, value string
		want             []string // in the error; none: accepted
	}{
		{name: "encoded", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "Authorization=Bearer%20s3cret,x-team=k%2C9"},
		{name: "space in a value, sent as is", env: "OTEL_EXPORTER_OTLP_HEADERS", value: " Authorization = Bearer s3cret "},
		{name: "trailing comma", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "a=1,"},
		{name: "no =", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "a=1,s3cret",
			want: []string{"$OTEL_EXPORTER_OTLP_HEADERS: entry 2: it has no '='"}},
		{name: "bad percent-encoding", env: "OTEL_EXPORTER_OTLP_METRICS_HEADERS", value: "x-api-key=s3cret%zz,b=2",
			want: []string{`$OTEL_EXPORTER_OTLP_METRICS_HEADERS: entry 1: the value of "x-api-key" is not URL-encoded`}},
		{name: "a lone percent", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "a=1,b=2,k=50%s3cret",
			want: []string{`entry 3: the value of "k" is not URL-encoded`}},
		{name: "space in a key", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "my key=s3cret",
			want: []string{"entry 1: its key is not a header name"}},
		{name: "a colon for the =", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "Authorization: Bearer s3cret=",
			want: []string{"entry 1: its key is not a header name"}},
		{name: "empty key", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "=s3cret", want: []string{"entry 1: its key"}},
		{name: "control character", env: "OTEL_EXPORTER_OTLP_HEADERS", value: "k=s3%0Acret",
			want: []string{`entry 1: the value of "k" holds a control character`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "")
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "")
			t.Setenv(tc.env, tc.value)
			err := CheckEnvHeaders()
			if len(tc.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Contains(t, err.Error(), "URL-encoded")
			assert.NotContains(t, err.Error(), "s3", "no value is printed")
		})
	}
}

// TestNewRefusesMalformedEnvHeaders: the exporter does not start, so
// nothing reaches the collector, and the error is every bad entry's of the
// variable the SDK sends (the metrics one when set, else the generic one).
func TestNewRefusesMalformedEnvHeaders(t *testing.T) {
	var got atomic.Int32
	col := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got.Add(1) }))
	defer col.Close()
	for _, tc := range []struct{ generic, metrics, want string }{
		{"Authorization=Bearer s3cret,x-key,b=%", "", "$OTEL_EXPORTER_OTLP_HEADERS: entry 2: it has no '='"},
		{"Authorization=Bearer s3cret,x-key", "a=%,c=s3cret%", `$OTEL_EXPORTER_OTLP_METRICS_HEADERS: entry 1: the value of "a" is not URL-encoded`},
		{"Authorization=Bearer s3cret,x-key", " ", "$OTEL_EXPORTER_OTLP_HEADERS: entry 2"}, // blank: the SDK sends the generic one
	} {
		t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", tc.generic)
		t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", tc.metrics)
		e, err := New(testOptions(col.URL + "/v1/metrics"))
		require.Error(t, err, tc.want)
		assert.Nil(t, e)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), "nothing was sent")
		assert.NotContains(t, err.Error(), "s3cret")
	}
	assert.Zero(t, got.Load())
}

// TestEnvSecretsAsSent: a value is redacted as the SDK sends it ('+' is
// not a space in a header), and one it would drop for its encoding still
// counts.
func TestEnvSecretsAsSent(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "k=tok+en,bad=s3cret%zz,x-key")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "")
	assert.Equal(t, []string{"tok+en", "s3cret%zz"}, EnvSecrets())
}

// TestCheckEnvHeadersOfTheVariableSent: with the metrics variable set the
// SDK sends its headers alone, so a malformed generic variable (set for
// other tools) does not refuse the run, and a malformed metrics one does.
func TestCheckEnvHeadersOfTheVariableSent(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "not a header")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-api-key=k")
	assert.NoError(t, CheckEnvHeaders())
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-api-key=k%zz")
	assert.ErrorContains(t, CheckEnvHeaders(), "$OTEL_EXPORTER_OTLP_METRICS_HEADERS: entry 1")
}
