package plan

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The --stream domains (AIPerf's): the GenAI metric histograms, the
// aiperf.timing.* counters, or both.
const (
	StreamMetrics = "metrics"
	StreamTiming  = "timing"
	StreamDefault = "default"
)

// DefaultMLflowExperiment is AIPerf's MLflow experiment name.
const DefaultMLflowExperiment = "aiperf"

// DefaultMetricsLinger is how long --metrics-listen waits, after the run,
// for a last scrape.
const DefaultMetricsLinger = 60.0

// integrationURLs are the URLs of the integrations that are set, whose
// credentials are secrets.
func (p Profile) integrationURLs() []string {
	var out []string
	for _, u := range []string{p.OtelURL, p.MLflowTrackingURI} {
		if u != "" {
			out = append(out, u)
		}
	}
	return out
}

// OtelMetricsURL is --otel-url as the OTLP/HTTP metrics endpoint, as AIPerf
// normalises it: http:// when it has no scheme, /v1/metrics appended to a
// path that does not end with it; "" when unset.
func (p Profile) OtelMetricsURL() string {
	raw := strings.TrimSpace(p.OtelURL)
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	path := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(path, "/v1/metrics") {
		path += "/v1/metrics"
	}
	u.Path, u.RawPath = path, ""
	return u.String()
}

// StreamDomains reports what --otel-url streams: the metric histograms,
// the timing counters, or both (no --stream: both).
func (p Profile) StreamDomains() (metrics, timing bool) {
	if len(p.Stream) == 0 {
		return true, true
	}
	for _, s := range p.Stream {
		switch strings.TrimSpace(s) {
		case StreamMetrics:
			metrics = true
		case StreamTiming:
			timing = true
		case StreamDefault:
			metrics, timing = true, true
		}
	}
	return metrics, timing
}

// ResourceAttributes parses --otel-resource-attributes: key=value pairs,
// each flag comma-separated, later keys overriding earlier ones.
func (p Profile) ResourceAttributes() (map[string]string, error) {
	return pairs(p.OtelResourceAttributes, "=", "key=value")
}

// MLflowTags parses --mlflow-tag: key:value pairs, each flag
// comma-separated (AIPerf's tags string).
func (p Profile) MLflowTags() (map[string]string, error) {
	return pairs(p.MLflowTag, ":", "key:value")
}

// MLflowExperimentName is --mlflow-experiment, or AIPerf's default.
func (p Profile) MLflowExperimentName() string {
	if p.MLflowExperiment == "" {
		return DefaultMLflowExperiment
	}
	return p.MLflowExperiment
}

// Linger is how long --metrics-listen waits for a last scrape, in seconds.
func (p Profile) Linger() float64 {
	if p.MetricsLinger == nil {
		return DefaultMetricsLinger
	}
	return *p.MetricsLinger
}

// pairs parses items of "k<sep>v" joined by commas.
func pairs(items []string, sep, shape string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, item := range items {
		for part := range strings.SplitSeq(item, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			k, v, ok := strings.Cut(part, sep)
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("must be %s pairs, got %q", shape, part)
			}
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out, nil
}

// integrations checks the OpenTelemetry, MLflow and live-metrics options.
func (v *validator) integrations(p *Profile) {
	if p.OtelURL != "" {
		v.integrationURL("otel_url", p.OtelMetricsURL(), OtelURLShape)
	}
	for _, s := range p.Stream {
		v.oneOf("stream", strings.TrimSpace(s), StreamMetrics, StreamTiming, StreamDefault)
	}
	v.check(len(p.Stream) == 0 || p.OtelURL != "", "stream", "needs --otel-url")
	v.check(len(p.OtelResourceAttributes) == 0 || p.OtelURL != "", "otel_resource_attributes", "needs --otel-url")
	if _, err := p.ResourceAttributes(); err != nil {
		v.add("otel_resource_attributes", err.Error())
	}
	if p.MLflowTrackingURI != "" {
		v.integrationURL("mlflow_tracking_uri", p.MLflowTrackingURI, MLflowURIShape)
	}
	if _, err := p.MLflowTags(); err != nil {
		v.add("mlflow_tag", err.Error())
	}
	for _, g := range p.MLflowArtifactGlob {
		_, bad := path.Match(strings.TrimPrefix(g, "**/"), "")
		switch {
		case strings.TrimSpace(g) == "" || strings.HasPrefix(g, "/") || slices.Contains(strings.Split(g, "/"), ".."):
			v.add("mlflow_artifact_glob", fmt.Sprintf("must be a pattern relative to the artifact directory, got %q", g))
		case bad != nil:
			v.add("mlflow_artifact_glob", fmt.Sprintf("%q is not a glob pattern (%v): escape [ ] * ? \\ with \\ to match them as they are", g, bad))
		}
	}
	if p.MetricsListen != "" {
		host, port, err := net.SplitHostPort(p.MetricsListen)
		v.check(err == nil && !strings.Contains(host, "/") && port != "", "metrics_listen",
			fmt.Sprintf("must be HOST:PORT or :PORT (port 0: any free port), got %q", p.MetricsListen))
	}
	if p.MetricsLinger != nil && !v.nonFinite["metrics_linger"] {
		v.seconds("metrics_linger", p.MetricsLinger, true)
		v.check(p.MetricsListen != "", "metrics_linger", "needs --metrics-listen")
	}
}

// What --otel-url and --mlflow-tracking-uri take, for messages.
const (
	OtelURLShape   = "host[:port] or an http(s) URL (OTLP/HTTP; gRPC is not supported)"
	MLflowURIShape = "an http(s) URL of an MLflow tracking server"
)

// integrationURL checks an integration's http(s) URL.
func (v *validator) integrationURL(field, raw, want string) {
	if err := CheckIntegrationURL(raw, want); err != nil {
		v.add(field, err.Error())
	}
}

// CheckIntegrationURL checks that raw is an http(s) URL with a host and no
// query or fragment (which its client would drop, or paste into every
// path); the error says it must be want, showing raw with its credentials
// redacted.
func CheckIntegrationURL(raw, want string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return fmt.Errorf("must be %s, got %q", want, RedactURL(raw))
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return fmt.Errorf("must be %s without a query or fragment (it would not be sent as written), got %q: "+
			"give credentials in the URL's user info or the integration's environment variables", want, RedactURL(raw))
	}
	return nil
}

// GenAIProvider is the gen_ai.provider.name of the run: --gen-ai-provider,
// else inferred from the first --url's host as AIPerf does (a well-known
// API host), else "_OTHER".
func (p Profile) GenAIProvider() string {
	if p.GenAIProviderName != "" {
		return p.GenAIProviderName
	}
	if len(p.URL) == 0 {
		return "_OTHER"
	}
	u, err := url.Parse(NormalizeURL(p.URL[0]))
	if err != nil {
		return "_OTHER"
	}
	host := strings.ToLower(u.Hostname())
	for _, k := range knownProviders {
		if host == k.host || strings.HasSuffix(host, "."+k.host) {
			return k.name
		}
	}
	return "_OTHER"
}

// knownProviders are the API hosts of the conventions' well-known
// gen_ai.provider.name values.
var knownProviders = []struct{ host, name string }{
	{"api.openai.com", "openai"},
	{"openai.azure.com", "azure.ai.openai"},
	{"api.anthropic.com", "anthropic"},
	{"api.mistral.ai", "mistral_ai"},
	{"api.groq.com", "groq"},
	{"api.deepseek.com", "deepseek"},
	{"api.perplexity.ai", "perplexity"},
	{"api.x.ai", "x_ai"},
	{"api.cohere.com", "cohere"},
	{"api.cohere.ai", "cohere"},
	{"generativelanguage.googleapis.com", "gcp.gemini"},
	{"aiplatform.googleapis.com", "gcp.vertex_ai"},
	{"amazonaws.com", "aws.bedrock"},
}

// GenAIOperation is the gen_ai.operation.name of the endpoint type: a
// well-known value where one applies, else the type itself.
func (p Profile) GenAIOperation() string {
	switch p.EndpointType {
	case EndpointChat, "responses", "messages":
		return "chat"
	case EndpointCompletions, "huggingface_generate":
		return "text_completion"
	case "embeddings", "chat_embeddings", "nim_embeddings":
		return "embeddings"
	}
	return p.EndpointType
}

// Endpoint is a server's host and port.
type Endpoint struct {
	Host string
	Port int
}

// ServerEndpoints are the host and port of each --url (the scheme's
// default port when it names none), for server.address and server.port.
func (p Profile) ServerEndpoints() []Endpoint {
	out := make([]Endpoint, len(p.URL))
	for i, raw := range p.URL {
		u, err := url.Parse(NormalizeURL(raw))
		if err != nil {
			continue
		}
		out[i].Host, out[i].Port = u.Hostname(), 80
		if u.Scheme == "https" {
			out[i].Port = 443
		}
		if port, err := strconv.Atoi(u.Port()); err == nil {
			out[i].Port = port
		}
	}
	return out
}

// WithoutIntegrations is p without where it is streamed and logged: what
// a sweep's identity (Sweep.Digest) leaves out, so adding --otel-url or
// --mlflow-tracking-uri to a --resume still finds the sweep.
func (p Profile) WithoutIntegrations() Profile {
	p.OtelURL, p.Stream, p.OtelResourceAttributes, p.GenAIProviderName = "", nil, nil, ""
	p.MLflowTrackingURI, p.MLflowExperiment, p.MLflowRunName, p.MLflowTag = "", "", "", nil
	p.MLflowArtifactGlob, p.MLflowParentRunID, p.MetricsListen, p.MetricsLinger = nil, "", "", nil
	return p
}
