package config

import (
	"encoding/json"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// endpoint reads an endpoint section.
func (d *decoder) endpoint(path string, v *yaml.Node) {
	if !d.mapping(v, path) {
		return
	}
	transport, sagemaker, done := d.sageMakerFields()
	d.fields(v, path, d.endpointFields(transport, sagemaker))
	done()
}

// endpointFields are an endpoint section's keys; transport and sagemaker
// are sageMakerFields' readers.
func (d *decoder) endpointFields(transport, sagemaker func(string, *yaml.Node)) []field {
	return []field{
		{keys("url", "urls"), d.opt("url")},
		{keys("url_strategy"), d.notYetUnless("round_robin", "a url_strategy other than round_robin", "")},
		{keys("type"), d.opt("endpoint_type", plan.EndpointTypes...)},
		{keys("path"), d.opt("endpoint")},
		{keys("streaming"), d.opt("streaming")},
		{keys("api_key"), d.opt("api_key")},
		{keys("headers"), d.headers},
		{keys("timeout"), func(path string, v *yaml.Node) {
			x, ok := d.seconds(path, v, false)
			if !ok {
				return
			}
			if x == 0 {
				d.errorf(v, path, "0 (no timeout) is not supported: give the seconds a request may take")
				return
			}
			d.f.Profile.RequestTimeoutSeconds = x
			d.mark("request_timeout_seconds", v, path)
		}},
		{keys("extra"), d.extra},
		{keys("use_server_token_count"), d.opt("use_server_token_count")},
		{keys("per_chunk_usage"), d.opt("per_chunk_usage")},
		{keys("auth_type"), d.opt("auth_type", "sigv4")},
		{keys("aws_region"), d.opt("aws_region")},
		{keys("aws_service"), d.opt("aws_service")},
		{keys("aws_profile"), d.opt("aws_profile")},
		{keys("wait_for_model_timeout"), d.opt("wait_for_model_timeout")},
		{keys("wait_for_model_interval"), d.opt("wait_for_model_interval")},
		{keys("wait_for_model_mode"), d.opt("wait_for_model_mode", plan.WaitModels, plan.WaitInference, plan.WaitBoth)},
		{keys("server"), d.opt("server", "vllm", "sglang", "trtllm", "llamacpp")},
		{keys("reset_kv_cache"), d.hook("reset_kv_cache", &d.f.Profile.ResetKVCache, []field{
			{keys("path"), d.opt("reset_kv_cache_path")},
			{keys("timeout_seconds"), d.opt("reset_kv_cache_timeout_seconds")},
			{keys("max_retry_seconds"), d.opt("reset_kv_cache_max_retry_seconds")},
		})},
		{keys("server_profiler"), d.hook("server_profiler", &d.f.Profile.ServerProfiler, []field{
			{keys("start_path"), d.opt("server_profiler_start_path")},
			{keys("stop_path"), d.opt("server_profiler_stop_path")},
			{keys("timeout_seconds"), d.opt("server_profiler_timeout_seconds")},
		})},
		{keys("transport"), transport},
		{keys("sagemaker"), sagemaker},
		{keys("connection_reuse"), d.opt("connection_reuse_strategy", "pooled", "never", "sticky-user-sessions")},
		{keys("http2"), d.notYetUnless("false", "http2: true", "")},
		{keys("ssl_verify"), d.notYetUnless("true", "ssl_verify: false", "")},
		{keys("uds_path"), d.notYet("uds_path: (Unix-domain sockets)", "")},
		{keys("connection_limit"), d.notYet("connection_limit:", "")},
		{keys("keepalive_timeout"), d.notYet("keepalive_timeout:", "")},
		{keys("use_legacy_max_tokens"), d.opt("use_legacy_max_tokens")},
		{keys("template"), d.notYet("template: (request body templates)", "use aiperf profile --endpoint-type template with its flags")},
		{keys("download_video_content"), d.opt("download_video_content")},
		{keys("request_content_type"), d.opt("request_content_type", "application/json", "multipart/form-data")},
		{keys("session_header"), d.opt("session_header")},
		{keys("uuid_and_strip"), d.opt("uuid_and_strip")},
	}
}

// hook handles endpoint.reset_kv_cache and endpoint.server_profiler: false or
// null (off), true (defaults) or an object of settings (on, as given).
func (d *decoder) hook(option string, enabled *bool, settings []field) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		switch {
		case v.Kind == yaml.MappingNode:
			*enabled = true
		case v.Kind == yaml.ScalarNode && v.ShortTag() == tagNull:
			*enabled = false
		case v.Kind == yaml.ScalarNode && v.ShortTag() == tagBool && v.Decode(enabled) == nil:
		default:
			d.errorf(v, path, "expected false | true | object, got %s", d.describe(v))
			return
		}
		d.mark(option, v, path)
		if v.Kind == yaml.MappingNode {
			d.fields(v, path, settings)
		}
	}
}

// headers reads endpoint.headers: an object {Name: value} or a list of
// "Name:value" strings. Values are never echoed in errors.
func (d *decoder) headers(path string, v *yaml.Node) {
	var hs []string
	switch v.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := deref(v.Content[i]), deref(v.Content[i+1])
			name, ok := d.str(path, k)
			if !ok {
				return
			}
			if err := plan.CheckHeaderName(name); err != nil { // "Authorization:Bearer" would send another header
				d.errorf(k, path, "header name %v", err)
				return
			}
			if val.Kind != yaml.ScalarNode {
				d.errorf(val, join(path, name), "expected a header value, got %s", d.describe(val))
				return
			}
			hs = append(hs, name+":"+val.Value)
		}
	case yaml.SequenceNode:
		var ok bool
		if hs, ok = d.strings(path, v); !ok {
			return
		}
	default:
		d.errorf(v, path, "expected an object of headers or a list of \"Name:value\" strings, got %s", d.describe(v))
		return
	}
	d.f.Profile.Header = hs
	d.mark("header", v, path)
}

// extra reads endpoint.extra: an object of request-body fields (each becomes
// one JSON --extra-inputs value) or a list of --extra-inputs strings.
func (d *decoder) extra(path string, v *yaml.Node) {
	var out []string
	switch v.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := deref(v.Content[i]), v.Content[i+1]
			name, ok := d.str(path, k)
			if !ok {
				return
			}
			var x any
			if err := val.Decode(&x); err != nil {
				d.errorf(val, join(path, name), "cannot read value: %v", err)
				return
			}
			b, err := json.Marshal(map[string]any{name: x})
			if err != nil {
				d.errorf(val, join(path, name), "cannot be sent as JSON: %v", err)
				return
			}
			out = append(out, string(b))
		}
	case yaml.SequenceNode:
		var ok bool
		if out, ok = d.strings(path, v); !ok {
			return
		}
	default:
		d.errorf(v, path, "expected an object of body fields or a list of \"key:value\" strings, got %s", d.describe(v))
		return
	}
	d.f.Profile.ExtraInputs = out
	d.mark("extra_inputs", v, path)
}

// sageMakerFields read endpoint.transport (http, or sagemaker: SageMaker
// Runtime) and the endpoint.sagemaker section: endpoint_name,
// target_model, inference_component_name and target_variant, AIPerf's
// --sagemaker-* options. transport: sagemaker needs the section's
// endpoint_name, checked once both were read, or by done, called after the
// endpoint section, when it has no sagemaker section.
func (d *decoder) sageMakerFields() (transport, sagemaker func(string, *yaml.Node), done func()) {
	var pending *yaml.Node // transport: sagemaker, read before the section
	var pendingPath string
	var plain *yaml.Node // transport: http
	var plainPath string
	seen := false
	need := func(v *yaml.Node, path string) {
		if d.f.Profile.SageMakerEndpointName == "" {
			d.errorf(v, path, "sagemaker requires sagemaker.endpoint_name: without it the request path would be /endpoints//invocations")
		}
	}
	refuse := func() {
		if plain != nil && seen {
			d.errorf(plain, plainPath, "http cannot invoke a SageMaker endpoint, which the sagemaker section names: "+
				"drop transport (or give sagemaker), or drop the sagemaker section")
		}
	}
	other := d.notYetUnless("http", "a transport other than http or sagemaker", "")
	transport = func(path string, v *yaml.Node) {
		if v.Kind == yaml.ScalarNode && v.Value == "http" {
			plain, plainPath = v, path
		}
		if v.Kind != yaml.ScalarNode || v.Value != plan.TransportSageMaker {
			other(path, v)
			return
		}
		if seen {
			need(v, path)
			return
		}
		pending, pendingPath = v, path
	}
	sagemaker = func(path string, v *yaml.Node) {
		seen = true
		if !d.mapping(v, path) {
			return
		}
		d.fields(v, path, []field{
			{keys("endpoint_name"), d.opt("sagemaker_endpoint_name")},
			{keys("target_model"), d.opt("sagemaker_target_model")},
			{keys("inference_component_name"), d.opt("sagemaker_inference_component_name")},
			{keys("target_variant"), d.opt("sagemaker_target_variant")},
		})
		if pending != nil {
			need(pending, pendingPath)
		}
	}
	done = func() {
		if pending != nil && !seen {
			need(pending, pendingPath)
		}
		refuse()
	}
	return transport, sagemaker, done
}
