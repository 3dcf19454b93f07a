package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSigV4Checks(t *testing.T) {
	check := func(mut func(p *Profile)) error {
		p := valid()
		mut(&p)
		return p.Check()
	}
	sig := func(p *Profile) { p.AuthType, p.AWSRegion, p.AWSService = AuthSigV4, "us-west-2", "sagemaker" }
	assert.NoError(t, check(sig))
	assert.NoError(t, check(func(p *Profile) { sig(p); p.URL = []string{"https://runtime.sagemaker.us-west-2.amazonaws.com"} }))
	assert.NoError(t, check(func(p *Profile) {
		sig(p)
		p.URL = []string{"localhost:8000", "http://[::1]:9000", "http://LOCALHOST:8000"}
	}), "loopback may be plain HTTP")
	for _, tc := range []struct {
		mut  func(p *Profile)
		want string
	}{
		{func(p *Profile) { p.AWSProfile = "dev" }, "--aws-profile needs --auth-type sigv4"},
		{func(p *Profile) { p.AuthType = AuthSigV4 }, "--auth-type sigv4 requires --aws-region and --aws-service"},
		{func(p *Profile) { sig(p); p.AWSRegion = "us west" }, "--aws-region must be a plain name"},
		{func(p *Profile) { sig(p); p.URL = []string{"gpu-box:8000"} }, "gpu-box:8000 is plain HTTP to another machine"},
		{func(p *Profile) { sig(p); p.EndpointType = EndpointVideoGeneration }, "cannot sign a video_generation job's polls"},
	} {
		assert.ErrorContains(t, check(tc.mut), tc.want)
	}
}
