package endpoint

import (
	"encoding/json"
	"fmt"
	"math"
)

// checkEmbeddings says why the embeddings a template or raw reply holds
// are not valid, "" when they are or when the reply's output is not
// embeddings: OpenAI's data list, an "embeddings" list of vectors or one
// "embedding" vector. How many texts a template sent is not known (it may
// send one, all, or the passages), so their count is not checked; each
// vector must be a non-empty list of finite numbers (or a base64 string
// of float32s), all of one length; the data list's indices cover its
// entries exactly once.
func (f detectFormat) checkEmbeddings(v any) string {
	for i, path := range detectPaths[:3] {
		x, ok := path.Find(v)
		if !ok {
			continue
		}
		switch i {
		case 0:
			obj, _ := v.(map[string]any)
			data, _ := obj["data"].([]any)
			return f.checkData(data)
		case 1:
			return f.checkEmbeddingsField(x)
		default:
			if _, why := anyVectorDims(x); why != "" {
				return "embedding " + why
			}
		}
		return ""
	}
	return ""
}

// checkEmbeddingsField checks an "embeddings" field: a list of vectors, or
// Cohere v2's object of them by type ({"float": [[...]], "int8": ...}).
func (f detectFormat) checkEmbeddingsField(x any) string {
	switch e := x.(type) {
	case []any:
		return f.checkVectors("embeddings", e)
	case map[string]any:
		for typ, lists := range e {
			list, ok := lists.([]any)
			if !ok {
				return fmt.Sprintf("embeddings.%s is not a list of vectors", typ)
			}
			if why := f.checkVectors("embeddings."+typ, list); why != "" {
				return why
			}
		}
		return ""
	}
	return "embeddings is not a list of vectors"
}

// checkData checks OpenAI's data list of embedding objects.
func (f detectFormat) checkData(data []any) string {
	idx := indexSet{n: len(data), what: "embeddings"}
	vecs := make([]any, len(data))
	for i, d := range data {
		obj, ok := d.(map[string]any)
		if !ok {
			return fmt.Sprintf("data[%d] is not an embedding object", i)
		}
		vecs[i] = obj["embedding"]
		index, ok := obj["index"]
		if !ok {
			index = json.Number(fmt.Sprint(i))
		}
		raw, _ := json.Marshal(index)
		if why := idx.add(raw); why != "" {
			return fmt.Sprintf("data[%d] %s", i, why)
		}
	}
	return f.checkVectors("data", vecs)
}

// checkVectors checks a list of vectors of one length.
func (f detectFormat) checkVectors(name string, vecs []any) string {
	dims := 0
	for i, x := range vecs {
		n, why := anyVectorDims(x)
		if why != "" {
			return fmt.Sprintf("%s[%d] embedding %s", name, i, why)
		}
		if i > 0 && n != dims {
			return fmt.Sprintf("%s[%d] embedding has %d dimensions, %s[0] %d", name, i, n, name, dims)
		}
		dims = n
	}
	return ""
}

// anyVectorDims is the length of a decoded vector (numbers kept as
// json.Number), or why it is not one.
func anyVectorDims(x any) (int, string) {
	switch vec := x.(type) {
	case nil:
		return 0, "is null"
	case string:
		return base64StringDims(vec)
	case []any:
		if len(vec) == 0 {
			return 0, "is empty"
		}
		for i, e := range vec {
			n, ok := e.(json.Number)
			if !ok {
				raw, _ := json.Marshal(e)
				return 0, fmt.Sprintf("element %d is not a number (%s)", i, shortValue(string(raw)))
			}
			if f, err := n.Float64(); err != nil || math.IsInf(f, 0) {
				return 0, fmt.Sprintf("element %d is out of range (%s)", i, shortValue(n.String()))
			}
		}
		return len(vec), ""
	}
	return 0, "is not a list of numbers"
}
