package plan

import (
	"fmt"
	"strings"
)

// AuthSigV4 is --auth-type sigv4: every request signed with AWS Signature
// Version 4 (internal/sigv4).
const AuthSigV4 = "sigv4"

// sigv4 checks --auth-type and the --aws-* options with AIPerf's rules: the
// --aws-* options need --auth-type sigv4, which needs a region and a
// signing name, and never sends its signature and session token over plain
// HTTP beyond this machine. What this client does not sign (the control
// hooks, a video job's polls) is refused with it.
func (v *validator) sigv4(p *Profile) {
	v.sagemaker(p)
	v.oneOf("auth_type", p.AuthType, "", AuthSigV4)
	if p.AuthType == "" {
		for _, o := range []struct{ name, value string }{{"aws_region", p.AWSRegion}, {"aws_service", p.AWSService}, {"aws_profile", p.AWSProfile}} {
			v.check(o.value == "", o.name, "needs --auth-type sigv4 (it would be ignored): add it, or remove this option")
		}
		return
	}
	var missing []string
	if p.AWSRegion == "" {
		missing = append(missing, "--aws-region")
	}
	if p.AWSService == "" {
		missing = append(missing, "--aws-service")
	}
	v.check(len(missing) == 0, "auth_type", fmt.Sprintf("sigv4 requires %s. The signing name is the credential scope, not the API id: "+
		"SageMaker Runtime signs as 'sagemaker', Bedrock Runtime as 'bedrock', and API Gateway as 'execute-api'", strings.Join(missing, " and ")))
	for _, o := range []struct{ name, value string }{{"aws_region", p.AWSRegion}, {"aws_service", p.AWSService}} {
		v.check(!strings.ContainsFunc(o.value, func(r rune) bool { return r <= ' ' || r == '/' || r > '~' }), o.name,
			fmt.Sprintf("must be a plain name such as us-west-2 or sagemaker, got %q", o.value))
	}
	for _, raw := range p.URL {
		if u, ok := parseOrigin(raw); ok && u.Scheme == "http" && !isLoopback(u.Hostname()) {
			v.add("auth_type", fmt.Sprintf("sigv4 puts the signature and any session token into every request's headers, and %s is "+
				"plain HTTP to another machine: use https, or drop --auth-type", RedactURL(raw)))
		}
	}
	v.check(p.EndpointType != EndpointVideoGeneration, "auth_type",
		"sigv4 cannot sign a video_generation job's polls and downloads here: drop --auth-type, or use another endpoint type")
	v.check(!p.ResetHook().Enabled && !p.ProfilerHook().Enabled, "auth_type",
		"sigv4 does not sign the control hooks (--reset-kv-cache, --server-profiler): drop them, or drop --auth-type")
}
