package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOtelMetricsURL(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:4318":           "http://localhost:4318/v1/metrics",
		"http://collector:4318":    "http://collector:4318/v1/metrics",
		"https://c.example/otlp/":  "https://c.example/otlp/v1/metrics",
		"http://c:4318/v1/metrics": "http://c:4318/v1/metrics",
		"http://u:pw@c:4318?x=1":   "http://u:pw@c:4318/v1/metrics?x=1",
		"":                         "",
	} {
		assert.Equal(t, want, Profile{OtelURL: in}.OtelMetricsURL(), in)
	}
}

func TestIntegrationChecks(t *testing.T) {
	p := NewProfile()
	p.Model = []string{"m"}
	p.OtelURL, p.Stream = "localhost:4318", []string{"metrics", "timing"}
	p.OtelResourceAttributes = []string{"team=inference,env=prod", "region=us"}
	p.MLflowTrackingURI, p.MLflowTag = "http://localhost:5000", []string{"team:perf"}
	p.MetricsListen, p.MetricsLinger = "127.0.0.1:0", Ptr(0.0)
	require.NoError(t, p.Check())
	attrs, err := p.ResourceAttributes()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "inference", "env": "prod", "region": "us"}, attrs)

	bad := NewProfile()
	bad.Model = []string{"m"}
	bad.OtelURL, bad.Stream = "grpc://c:4317", []string{"traces"}
	bad.OtelResourceAttributes = []string{"team"}
	bad.MLflowTrackingURI, bad.MLflowTag = "file:./mlruns", []string{"novalue"}
	bad.MLflowArtifactGlob = []string{"../*.json", "[", "**/x["}
	bad.MetricsListen = "9464"
	var msgs []string
	for _, fe := range FieldErrors(bad.Check()) {
		msgs = append(msgs, fe.Error())
	}
	assert.ElementsMatch(t, []string{
		`--otel-url must be host[:port] or an http(s) URL (OTLP/HTTP; gRPC is not supported), got "grpc://c:4317/v1/metrics"`,
		`--stream must be one of metrics, timing, default, got "traces"`,
		`--otel-resource-attributes must be key=value pairs, got "team"`,
		`--mlflow-tracking-uri must be an http(s) URL of an MLflow tracking server, got "file:./mlruns"`,
		`--mlflow-tag must be key:value pairs, got "novalue"`,
		`--mlflow-artifact-glob must be a pattern relative to the artifact directory, got "../*.json"`,
		`--mlflow-artifact-glob "[" is not a glob pattern (syntax error in pattern): escape [ ] * ? \ with \ to match them as they are`,
		`--mlflow-artifact-glob "**/x[" is not a glob pattern (syntax error in pattern): escape [ ] * ? \ with \ to match them as they are`,
		`--metrics-listen must be HOST:PORT or :PORT (port 0: any free port), got "9464"`,
	}, msgs)
}

func TestIntegrationSecretsRedacted(t *testing.T) {
	p := Profile{OtelURL: "http://otel:s3cret@c:4318", MLflowTrackingURI: "https://ml:hunter22@m.example?token=t0k3n"}
	r := p.Redacted()
	assert.Equal(t, "http://<redacted>@c:4318", r.OtelURL)
	assert.Equal(t, "https://<redacted>@m.example?token=<redacted>", r.MLflowTrackingURI)
	assert.Subset(t, p.Secrets(), []string{"s3cret", "hunter22", "t0k3n"})
}

func TestGenAIProvider(t *testing.T) {
	for url, want := range map[string]string{
		"https://api.openai.com/v1":                       "openai",
		"https://x.openai.azure.com":                      "azure.ai.openai",
		"http://localhost:8000":                           "_OTHER",
		"https://bedrock-runtime.us-east-1.amazonaws.com": "aws.bedrock",
	} {
		assert.Equal(t, want, Profile{URL: []string{url}}.GenAIProvider(), url)
	}
	assert.Equal(t, "vllm", Profile{URL: []string{"http://localhost:8000"}, GenAIProviderName: "vllm"}.GenAIProvider())
	assert.Equal(t, "text_completion", Profile{EndpointType: "completions"}.GenAIOperation())
	assert.Equal(t, []Endpoint{{"h", 443}, {"127.0.0.1", 8000}},
		Profile{URL: []string{"https://h/v1", "http://127.0.0.1:8000"}}.ServerEndpoints())
}

// An integration URL with a query or fragment is refused: its client would
// drop the query (OTLP) or paste it into every path (MLflow), and the
// credential it holds is shown redacted.
func TestIntegrationURLWithQueryRefused(t *testing.T) {
	err := CheckIntegrationURL("http://h:5000/?token=QSECRET", MLflowURIShape)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "without a query or fragment")
	assert.NotContains(t, err.Error(), "QSECRET")
	require.NoError(t, CheckIntegrationURL("http://u:p@h:5000/base", MLflowURIShape))
}
