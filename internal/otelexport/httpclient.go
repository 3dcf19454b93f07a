package otelexport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"
)

// httpClient is the exporter's HTTP client: the SDK's own settings (a
// proxy from the environment, the timeout, the TLS files the OTLP
// environment variables name), and no redirect followed. The SDK's client
// would follow one with Go's rules, re-sending the metrics and every
// $OTEL_EXPORTER_OTLP_HEADERS header, whose names (x-honeycomb-team, ...)
// say nothing of the credentials they hold, to wherever it points; a
// collector that redirects fails its exports instead, and is warned about.
// Its transport notes each answer for the export's report (observing).
func httpClient(timeout time.Duration) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	cfg, err := envTLS()
	if err != nil {
		return nil, err
	}
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: observing{tr}, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

// envTLS is the TLS configuration the OTLP environment variables give
// (OTEL_EXPORTER_OTLP_[METRICS_]CERTIFICATE: the collector's CA;
// ..._CLIENT_CERTIFICATE and ..._CLIENT_KEY: the client's pair), nil when
// they give none.
func envTLS() (*tls.Config, error) {
	ca := otlpEnv("CERTIFICATE")
	cert, key := os.Getenv("OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE"), os.Getenv("OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY")
	if cert == "" && key == "" { // a pair, from one level: the SDK's rule
		cert, key = os.Getenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"), os.Getenv("OTEL_EXPORTER_OTLP_CLIENT_KEY")
	}
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("read the otlp certificate: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the otlp certificate %s holds no PEM certificate", ca)
		}
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return nil, errors.New("the otlp client certificate needs both OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY")
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("load the otlp client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// otlpEnv is OTEL_EXPORTER_OTLP_METRICS_<name>, else
// OTEL_EXPORTER_OTLP_<name>.
func otlpEnv(name string) string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_METRICS_" + name); v != "" {
		return v
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_" + name)
}
