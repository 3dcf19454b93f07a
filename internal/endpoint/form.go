package endpoint

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"mime/multipart"
	"net/textproto"
	"slices"
)

// multipartBoundary separates the parts of every multipart/form-data body:
// random per process, so that no file's bytes hold it.
var multipartBoundary = func() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "aiperf-" + hex.EncodeToString(b)
}()

// formFile is a file part of a form endpoint's body (image_edit's image,
// audio_transcription's audio) as its JSON payload holds it, AIPerf's
// shape: the bytes in base64, the part's file name and Content-Type.
// inputs.json and the raw export show it so, and formBody sends it as the
// file part.
type formFile struct {
	B64Data     string `json:"b64_data"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
}

// formBody re-encodes a JSON object body as multipart/form-data, as
// AIPerf's transport sends it (--request-content-type multipart/form-data,
// and the form endpoint types): a field per key, in key order, a string's
// value as the string and any other value as its JSON text, except an
// object with a string "b64_data" (a formFile), which is a file part of
// those bytes, its filename (else the key) and content_type (else
// application/octet-stream), after the fields. It returns the body and its
// Content-Type (with the boundary).
func formBody(body []byte) ([]byte, string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, "", fmt.Errorf("build multipart/form-data request: the body is not a JSON object")
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(multipartBoundary); err != nil {
		return nil, "", fmt.Errorf("build multipart/form-data request: %w", err)
	}
	type file struct {
		name string
		f    formFile
	}
	var files []file
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if f, ok := asFormFile(obj[k]); ok {
			files = append(files, file{k, f})
			continue
		}
		v := string(obj[k])
		var s string
		if bytes.HasPrefix(obj[k], []byte(`"`)) && json.Unmarshal(obj[k], &s) == nil {
			v = s
		}
		if err := w.WriteField(k, v); err != nil {
			return nil, "", fmt.Errorf("build multipart/form-data request: %w", err)
		}
	}
	for _, f := range files {
		if err := writeFormFile(w, f.name, f.f); err != nil {
			return nil, "", fmt.Errorf("build multipart/form-data request: field %q: %w", f.name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("build multipart/form-data request: %w", err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// asFormFile reads a body's value as a file part: an object whose
// "b64_data" is a string (its filename and content_type strings too); ok
// is false for any other value, a field.
func asFormFile(v json.RawMessage) (f formFile, ok bool) {
	var o struct {
		B64Data     *string `json:"b64_data"`
		Filename    string  `json:"filename"`
		ContentType string  `json:"content_type"`
	}
	if !bytes.HasPrefix(v, []byte("{")) || json.Unmarshal(v, &o) != nil || o.B64Data == nil {
		return f, false
	}
	return formFile{B64Data: *o.B64Data, Filename: o.Filename, ContentType: o.ContentType}, true
}

// writeFormFile writes f as the file part name: its bytes, its filename
// (else name) and its content_type (else application/octet-stream).
func writeFormFile(w *multipart.Writer, name string, f formFile) error {
	raw, err := base64.StdEncoding.DecodeString(f.B64Data)
	if err != nil {
		return fmt.Errorf("b64_data is not valid base64: %w", err)
	}
	if f.Filename == "" {
		f.Filename = name
	}
	if f.ContentType == "" {
		f.ContentType = "application/octet-stream"
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", multipart.FileContentDisposition(name, f.Filename))
	h.Set("Content-Type", f.ContentType)
	part, err := w.CreatePart(h)
	if err == nil {
		_, err = part.Write(raw)
	}
	return err
}
