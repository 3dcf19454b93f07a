package mock

import "strings"

// LLaVA15ImageTokens is the prompt tokens vLLM gives any image for
// LLaVA-1.5 (vllm/model_executor/models/llava.py with the model's CLIP
// ViT-L/14 at 336 px): the processor resizes every image to 336×336, and
// the (336/14)² = 576 patch features, the CLS token dropped, are the
// image's tokens, whatever its size.
const LLaVA15ImageTokens = (336 / 14) * (336 / 14)

// ImageTokensFor is the prompt tokens of a w×h image for the model the mock
// serves (--model): LLaVA15ImageTokens for a LLaVA-1.5 model (an id
// containing "llava-1.5", as llava-hf/llava-1.5-7b-hf), else Qwen2-VL's
// count, ImageTokens.
func ImageTokensFor(model string, w, h int) int {
	if strings.Contains(strings.ToLower(model), "llava-1.5") {
		return LLaVA15ImageTokens
	}
	return ImageTokens(w, h)
}
