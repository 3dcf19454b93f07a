package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endpoint.transport: sagemaker and the endpoint.sagemaker section are
// AIPerf's SageMaker transport settings.
func TestSageMakerKeys(t *testing.T) {
	for _, order := range []string{
		"  endpoint: {transport: sagemaker, aws_region: us-west-2, sagemaker: {endpoint_name: my-ep, target_model: m.tar.gz, " +
			"inference_component_name: ic-1, target_variant: v1}}",
		"  endpoint: {sagemaker: {endpoint_name: my-ep, target_model: m.tar.gz, inference_component_name: ic-1, target_variant: v1}, " +
			"transport: sagemaker, aws_region: us-west-2}",
	} {
		f, err := parse("benchmark:", "  model: m", order)
		require.NoError(t, err)
		p := f.Profile
		assert.Equal(t, [4]string{"my-ep", "m.tar.gz", "ic-1", "v1"},
			[4]string{p.SageMakerEndpointName, p.SageMakerTargetModel, p.SageMakerInferenceComponentName, p.SageMakerTargetVariant})
	}
	for _, order := range []string{
		"  endpoint: {transport: sagemaker, sagemaker: {target_variant: v1}}",
		"  endpoint: {sagemaker: {target_variant: v1}, transport: sagemaker}",
		"  endpoint: {transport: sagemaker}",
	} {
		_, err := parse("benchmark:", "  model: m", order)
		assert.ErrorContains(t, err, "benchmark.endpoint.transport: sagemaker requires sagemaker.endpoint_name")
	}
	for _, order := range []string{
		"  endpoint: {transport: http, sagemaker: {endpoint_name: ep}}",
		"  endpoint: {sagemaker: {endpoint_name: ep}, transport: http}",
	} {
		_, err := parse("benchmark:", "  model: m", order)
		assert.ErrorContains(t, err, "benchmark.endpoint.transport: http cannot invoke a SageMaker endpoint")
	}
	_, err := parse("benchmark:", "  model: m", "  endpoint: {transport: grpc}")
	assert.ErrorContains(t, err, "a transport other than http or sagemaker is not supported yet")
}
