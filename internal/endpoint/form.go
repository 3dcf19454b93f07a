package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"slices"
)

// formBody re-encodes a JSON object body as multipart/form-data, as
// AIPerf's --request-content-type multipart/form-data sends it: a field per
// key, in key order, a string's value as the string and any other value as
// its JSON text. It returns the body and its Content-Type (with the
// boundary).
func formBody(body []byte) ([]byte, string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, "", fmt.Errorf("build multipart/form-data request: the body is not a JSON object")
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := string(obj[k])
		var s string
		if bytes.HasPrefix(obj[k], []byte(`"`)) && json.Unmarshal(obj[k], &s) == nil {
			v = s
		}
		if err := w.WriteField(k, v); err != nil {
			return nil, "", fmt.Errorf("build multipart/form-data request: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("build multipart/form-data request: %w", err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// newForm starts a multipart/form-data body in buf with the process's
// boundary (MultipartType's, the Content-Type a form endpoint's request
// carries) and writes fields in key order, each as formValue's text; the
// caller adds its file part and closes the writer.
func newForm(buf *bytes.Buffer, fields map[string]any) (*multipart.Writer, error) {
	w := multipart.NewWriter(buf)
	if err := w.SetBoundary(multipartBoundary); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := w.WriteField(k, formValue(fields[k])); err != nil {
			return nil, err
		}
	}
	return w, nil
}
