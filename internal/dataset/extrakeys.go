package dataset

import "encoding/json"

// promptKeys are the request-body keys that carry a request's prompt on
// some endpoint type: chat's and Anthropic's "messages", completions' and
// image generation's "prompt", the Responses API's, embeddings' and
// speech's "input", Hugging Face generate's "inputs" and Anthropic's
// "system". A row's extra is merged over the body the row's text (or
// length, or messages) made, so one of these in it would replace what the
// row stands for, and the ISL reported would count a prompt never sent.
// AIPerf merges them silently; every format here that takes a per-row
// extra refuses them at load. "stream" and the other keys are the row's to
// set.
var promptKeys = []string{"messages", "prompt", "input", "inputs", "system"}

// promptKeyOf is the first of promptKeys that extra holds, or "".
func promptKeyOf[V any](extra map[string]V) string {
	for _, k := range promptKeys {
		if _, ok := extra[k]; ok {
			return k
		}
	}
	return ""
}

// checkExtraPrompt refuses a row's extra (raw, at field) that holds one of
// promptKeys; an extra that is not an object is checkObject's to report.
func checkExtraPrompt(field string, raw json.RawMessage) []problem {
	if !isSet(raw) || jsonKindOf(raw) != "an object" {
		return nil
	}
	var extra map[string]json.RawMessage
	if json.Unmarshal(raw, &extra) != nil {
		return nil
	}
	k := promptKeyOf(extra)
	if k == "" {
		return nil
	}
	return []problem{problemf(field+"."+k, "%q in extra would replace the prompt the row sends (its text, messages or "+
		"input_length), and the ISL reported would count a prompt never sent: drop it (extra sets the other request fields)", k)}
}
