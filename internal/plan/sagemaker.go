package plan

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// TransportSageMaker is --transport sagemaker: AIPerf's SageMaker Runtime
// transport, on whenever --sagemaker-endpoint-name is set.
const TransportSageMaker = "sagemaker"

// AWSServiceSageMaker is the SigV4 signing name of SageMaker Runtime
// (botocore's sagemaker-runtime signs as sagemaker).
const AWSServiceSageMaker = "sagemaker"

// sageMakerName is the pattern SageMaker gives endpoint, variant and
// inference component names.
var sageMakerName = regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9])*$`)

// SageMakerOn reports whether requests go through SageMaker Runtime:
// --sagemaker-endpoint-name is set.
func (p *Profile) SageMakerOn() bool { return p.SageMakerEndpointName != "" }

// SageMakerRuntimeURL is SageMaker Runtime's base URL in region:
// https://runtime.sagemaker.REGION.amazonaws.com (amazonaws.com.cn in the
// cn-* regions).
func SageMakerRuntimeURL(region string) string {
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://runtime.sagemaker." + region + "." + suffix
}

// SageMakerDefaults fills in what the SageMaker transport implies, as
// AIPerf does, before Check: --auth-type sigv4, --aws-service sagemaker
// (an explicit one is kept) and, without --url, the runtime's URL in
// --aws-region. Without a region nothing is filled: Check asks for one.
func (p *Profile) SageMakerDefaults() {
	if !p.SageMakerOn() || p.AWSRegion == "" {
		return
	}
	if p.AuthType == "" {
		p.AuthType = AuthSigV4
	}
	if p.AWSService == "" {
		p.AWSService = AWSServiceSageMaker
	}
	if len(p.URL) == 0 {
		p.URL = []string{SageMakerRuntimeURL(p.AWSRegion)}
	}
}

// sageMakerPath is the route of a request through SageMaker Runtime:
// /endpoints/NAME/invocations, or invocations-response-stream when
// streaming, with NAME escaped whole (a '/' too); an --endpoint replaces
// it, as in AIPerf. The endpoint type's own path is not used: SageMaker
// routes on the endpoint, and the container on the body.
func (p *Profile) sageMakerPath() string {
	if p.Endpoint != "" {
		return p.Endpoint
	}
	op := "invocations"
	if p.Streams() {
		op = "invocations-response-stream"
	}
	return "/endpoints/" + url.PathEscape(p.SageMakerEndpointName) + "/" + op
}

// sagemaker checks the SageMaker transport's options with AIPerf's rules:
// the --sagemaker-* options need --sagemaker-endpoint-name, which needs
// --aws-region; what the transport cannot do (a readiness probe, the
// control hooks, multipart bodies, a video job's polls) is refused.
func (v *validator) sagemaker(p *Profile) {
	if !p.SageMakerOn() {
		for _, o := range []struct{ name, value string }{{"sagemaker_target_model", p.SageMakerTargetModel},
			{"sagemaker_inference_component_name", p.SageMakerInferenceComponentName}, {"sagemaker_target_variant", p.SageMakerTargetVariant}} {
			v.check(o.value == "", o.name, "needs --sagemaker-endpoint-name (it would be ignored): add it, or remove this option")
		}
		return
	}
	const field = "sagemaker_endpoint_name"
	v.check(p.AWSRegion != "", "aws_region", "is required with --sagemaker-endpoint-name: SageMaker endpoints require --aws-region: "+
		"it selects both the runtime hostname and the SigV4 credential scope, and there is no safe default to guess")
	v.check(sageMakerName.MatchString(p.SageMakerEndpointName) && len(p.SageMakerEndpointName) <= 63, field,
		fmt.Sprintf("must be a SageMaker endpoint name (letters, digits and inner hyphens, at most 63 characters), got %q", p.SageMakerEndpointName))
	for _, o := range []struct{ name, value string }{{"sagemaker_inference_component_name", p.SageMakerInferenceComponentName},
		{"sagemaker_target_variant", p.SageMakerTargetVariant}} {
		v.check(o.value == "" || sageMakerName.MatchString(o.value) && len(o.value) <= 63, o.name,
			fmt.Sprintf("must be a SageMaker name (letters, digits and inner hyphens, at most 63 characters), got %q", o.value))
	}
	v.check(!strings.ContainsFunc(p.SageMakerTargetModel, isControl), "sagemaker_target_model",
		"holds a control character, which cannot be sent in an HTTP header: give the model without it")
	v.check(p.WaitForModelTimeout == nil || *p.WaitForModelTimeout == 0, "wait_for_model_timeout",
		"cannot probe a SageMaker endpoint: SageMaker Runtime has no model list or readiness route to poll. "+
			"Drop --wait-for-model-timeout (check the endpoint is InService with aws sagemaker describe-endpoint)")
	v.check(!p.Spec().Form && p.RequestContentType != "multipart/form-data", field,
		fmt.Sprintf("cannot send multipart/form-data bodies, which --endpoint-type %s or --request-content-type asks for: "+
			"SigV4 must hash the body. Use a JSON endpoint type", p.EndpointType))
	if p.AuthType == AuthSigV4 {
		return // sigv4 refuses the control hooks and video_generation
	}
	v.check(!p.ResetHook().Enabled && !p.ProfilerHook().Enabled, field,
		"cannot be used with the control hooks (--reset-kv-cache, --server-profiler): SageMaker Runtime exposes only the "+
			"invocation routes; drop them")
	v.check(p.EndpointType != EndpointVideoGeneration, field,
		"cannot run a video_generation job: its polls and downloads are not SageMaker invocations. Use another endpoint type")
}
