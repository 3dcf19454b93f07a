package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endpoint.auth_type and the aws_* keys are AIPerf's EndpointConfig fields.
func TestSigV4Keys(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  model: m",
		"  endpoint: {auth_type: sigv4, aws_region: eu-west-1, awsService: bedrock, aws_profile: dev}",
	)
	require.NoError(t, err)
	p := f.Profile
	assert.Equal(t, [4]string{"sigv4", "eu-west-1", "bedrock", "dev"}, [4]string{p.AuthType, p.AWSRegion, p.AWSService, p.AWSProfile})
	_, err = parse(
		"benchmark:",
		"  model: m",
		"  endpoint: {auth_type: oauth}",
	)
	assert.ErrorContains(t, err, `bench.yaml:3: benchmark.endpoint.auth_type: expected sigv4, got "oauth"`)
}
