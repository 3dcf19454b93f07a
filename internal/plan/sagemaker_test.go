package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sageMaker is valid() through SageMaker Runtime in us-west-2, with its
// defaults filled in as aiperf profile does.
func sageMaker(mut func(p *Profile)) Profile {
	p := valid()
	p.URL = nil
	p.SageMakerEndpointName, p.AWSRegion = "my-ep", "us-west-2"
	if mut != nil {
		mut(&p)
	}
	p.SageMakerDefaults()
	return p
}

func TestSageMakerDefaults(t *testing.T) {
	p := sageMaker(nil)
	assert.Equal(t, AuthSigV4, p.AuthType, "the transport signs")
	assert.Equal(t, "sagemaker", p.AWSService)
	assert.Equal(t, []string{"https://runtime.sagemaker.us-west-2.amazonaws.com"}, p.URL)
	require.NoError(t, p.Check())

	p = sageMaker(func(p *Profile) { p.AWSRegion, p.AWSService = "cn-north-1", "sagemaker-custom" })
	assert.Equal(t, []string{"https://runtime.sagemaker.cn-north-1.amazonaws.com.cn"}, p.URL)
	assert.Equal(t, "sagemaker-custom", p.AWSService, "an explicit --aws-service is kept")

	p = valid()
	p.SageMakerDefaults()
	assert.Empty(t, p.AuthType, "plain HTTP is left alone")
}

func TestSageMakerRequestURLs(t *testing.T) {
	for _, tc := range []struct {
		mut  func(p *Profile)
		want []string
	}{
		{nil, []string{"https://runtime.sagemaker.us-west-2.amazonaws.com/endpoints/my-ep/invocations"}},
		{func(p *Profile) { p.Streaming = true }, []string{"https://runtime.sagemaker.us-west-2.amazonaws.com/endpoints/my-ep/invocations-response-stream"}},
		{func(p *Profile) {
			p.URL = []string{"http://127.0.0.1:9000", "https://proxy.example/endpoints/my-ep/invocations"}
		},
			[]string{"http://127.0.0.1:9000/endpoints/my-ep/invocations", "https://proxy.example/endpoints/my-ep/invocations"}},
		{func(p *Profile) { p.SageMakerEndpointName = "a/b c" }, []string{"https://runtime.sagemaker.us-west-2.amazonaws.com/endpoints/a%2Fb%20c/invocations"}},
		{func(p *Profile) { p.Endpoint = "/custom/route" }, []string{"https://runtime.sagemaker.us-west-2.amazonaws.com/custom/route"}},
		{func(p *Profile) { p.EndpointType, p.Streaming = EndpointEmbeddings, true }, []string{"https://runtime.sagemaker.us-west-2.amazonaws.com/endpoints/my-ep/invocations"}},
	} {
		p := sageMaker(tc.mut)
		assert.Equal(t, tc.want, p.RequestURLs())
	}
}

func TestSageMakerChecks(t *testing.T) {
	five := 5.0
	for _, tc := range []struct {
		mut  func(p *Profile)
		want string
	}{
		{func(p *Profile) { p.AWSRegion = "" }, "SageMaker endpoints require --aws-region: it selects both the runtime hostname"},
		{func(p *Profile) {
			p.SageMakerEndpointName = ""
			p.URL = []string{"http://127.0.0.1:1"}
			p.SageMakerTargetModel = "m"
		},
			"--sagemaker-target-model needs --sagemaker-endpoint-name"},
		{func(p *Profile) { p.SageMakerEndpointName = "my_ep" }, "--sagemaker-endpoint-name must be a SageMaker endpoint name"},
		{func(p *Profile) { p.SageMakerTargetVariant = "-v" }, "--sagemaker-target-variant must be a SageMaker name"},
		{func(p *Profile) { p.WaitForModelTimeout = &five }, "--wait-for-model-timeout cannot probe a SageMaker endpoint"},
		{func(p *Profile) { p.EndpointType = EndpointImageEdit }, "cannot send multipart/form-data bodies"},
		{func(p *Profile) { p.RequestContentType = "multipart/form-data" }, "cannot send multipart/form-data bodies"},
		{func(p *Profile) { p.ResetKVCache = true }, "does not sign the control hooks"},
	} {
		p := sageMaker(tc.mut)
		assert.ErrorContains(t, p.Check(), tc.want)
	}
	// Without its defaults (a profile checked before aiperf profile fills
	// them), the hooks are refused by the transport itself.
	p := valid()
	p.SageMakerEndpointName, p.AWSRegion, p.ResetKVCache = "my-ep", "us-west-2", true
	assert.ErrorContains(t, p.Check(), "--sagemaker-endpoint-name cannot be used with the control hooks")
}
