package endpoint

import (
	"net/http"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// SageMaker is what the SageMaker Runtime transport sends besides the
// body (AIPerf's --sagemaker-* options): its routing headers. The URL is
// the request's (plan.Profile.RequestURLs).
type SageMaker struct {
	// TargetModel is X-Amzn-SageMaker-Target-Model, sent with
	// InvokeEndpoint only: the streaming operation has no such member.
	TargetModel string
	// InferenceComponent is X-Amzn-SageMaker-Inference-Component.
	InferenceComponent string
	// TargetVariant is X-Amzn-SageMaker-Target-Variant.
	TargetVariant string
}

// SageMakerOf is p's SageMaker transport, nil when it sends plain HTTP.
func SageMakerOf(p *plan.Profile) *SageMaker {
	if !p.SageMakerOn() {
		return nil
	}
	return &SageMaker{TargetModel: p.SageMakerTargetModel, InferenceComponent: p.SageMakerInferenceComponentName, TargetVariant: p.SageMakerTargetVariant}
}

// sageMakerInferenceID is the header that carries each request's id (its
// X-Request-ID) to SageMaker, which records it with the inference.
const sageMakerInferenceID = "X-Amzn-Sagemaker-Inference-Id"

// headers sets SageMaker's headers in the client's: InvokeEndpoint's
// (plain) take Accept: application/json and the target model;
// InvokeEndpointWithResponseStream's (streaming) name their Accept
// X-Amzn-SageMaker-Accept, and send no Accept of SSE: the event stream is
// the operation's framing, not negotiated.
func (s *SageMaker) headers(plain, streaming http.Header) {
	for _, h := range []http.Header{plain, streaming} {
		setIf(h, "X-Amzn-SageMaker-Inference-Component", s.InferenceComponent)
		setIf(h, "X-Amzn-SageMaker-Target-Variant", s.TargetVariant)
	}
	plain.Set("Accept", "application/json")
	setIf(plain, "X-Amzn-SageMaker-Target-Model", s.TargetModel)
	streaming.Del("Accept")
	streaming.Set("X-Amzn-SageMaker-Accept", "application/json")
}

// setIf sets h's key to v unless v is empty.
func setIf(h http.Header, key, v string) {
	if v != "" {
		h.Set(key, v)
	}
}
