package mock

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Image generation and edit (OpenAI's /v1/images/generations and
// /v1/images/edits, as SGLang serves them): the prompt is prefilled like
// any other (--ttft, --prefill-us-per-token, the slots), then each image
// takes --image-gen-us-per-pixel per pixel of the requested size; the
// reply carries that many PNGs of that size.

// Bounds of an image request.
const (
	maxImageSide = 4096
	maxImagesN   = 10
)

// imageRequest is what the mock reads of a generation or edit request.
type imageRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	ResponseFormat string `json:"response_format"`
}

// images serves /v1/images/generations (edit false: a JSON body) or
// /v1/images/edits (a multipart body with the reference image).
func (s *Server) images(edit bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		arrival := time.Now()
		x := s.beginRequest(r)
		defer x.end()
		if !s.admitKey(w, r, x) {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
		req, width, height, err := readImageRequest(r, edit)
		if err != nil {
			x.fail(w, requestStatus(err), "invalid_request_error", err.Error())
			return
		}
		n := 1
		if req.N != nil {
			n = *req.N
		}
		if n < 1 || n > maxImagesN {
			x.fail(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("n must be between 1 and %d, got %d", maxImagesN, n))
			return
		}
		g := s.prefillGeneration("img-", []segment{{ids: s.tokens.ids(req.Prompt)}})
		s.prefillOnly(w, r, x, g, arrival, func() bool { return s.generateImages(r, n*width*height) },
			func() any { return imageReply(width, height, n, req.ResponseFormat) })
	}
}

// generateImages waits --image-gen-us-per-pixel × pixels; false if the
// client went away first.
func (s *Server) generateImages(r *http.Request, pixels int) bool {
	if s.cfg.Fast || s.cfg.ImageGenUSPerPixel <= 0 {
		return true
	}
	t := time.NewTimer(usDuration(s.cfg.ImageGenUSPerPixel * float64(pixels)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// readImageRequest reads a generation's JSON or an edit's multipart form,
// and the size to make: "size" (WxH), else the reference image's (edit),
// else 1024×1024.
func readImageRequest(r *http.Request, edit bool) (imageRequest, int, int, error) {
	var req imageRequest
	w, h := 1024, 1024
	if !edit {
		if err := decodeBody(r.Body, &req); err != nil {
			return req, 0, 0, err
		}
	} else {
		var err error
		if req, w, h, err = readEditForm(r); err != nil {
			return req, 0, 0, err
		}
	}
	if req.Prompt == "" {
		return req, 0, 0, errors.New("prompt is required")
	}
	if req.Size != "" && req.Size != "auto" {
		var err error
		if w, h, err = parseSize(req.Size); err != nil {
			return req, 0, 0, err
		}
	}
	return req, w, h, nil
}

// parseSize reads a size WIDTHxHEIGHT, each side 1 to maxImageSide.
func parseSize(size string) (int, int, error) {
	ws, hs, ok := strings.Cut(size, "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < 1 || h < 1 || w > maxImageSide || h > maxImageSide {
		return 0, 0, fmt.Errorf("size %q: expected WIDTHxHEIGHT, each 1 to %d", size, maxImageSide)
	}
	return w, h, nil
}

// readEditForm reads an edit's multipart form: its fields, and the
// reference image (the "image" file, decoded whole, or SGLang's "url").
func readEditForm(r *http.Request) (imageRequest, int, int, error) {
	var req imageRequest
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		return req, 0, 0, fmt.Errorf("read the multipart form: %w", err)
	}
	defer r.MultipartForm.RemoveAll()
	req.Model, req.Prompt, req.Size = r.FormValue("model"), r.FormValue("prompt"), r.FormValue("size")
	req.ResponseFormat = r.FormValue("response_format")
	if v := r.FormValue("n"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return req, 0, 0, fmt.Errorf("n %q: expected an integer", v)
		}
		req.N = &n
	}
	files := r.MultipartForm.File["image"]
	if len(files) == 0 {
		files = r.MultipartForm.File["image[]"]
	}
	if len(files) == 0 {
		if u := r.FormValue("url"); strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			return req, URLImageSide, URLImageSide, nil
		}
		return req, 0, 0, errors.New(`an edit needs a reference image: an "image" file (or an http(s) "url")`)
	}
	f, err := files[0].Open()
	if err != nil {
		return req, 0, 0, fmt.Errorf("image: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(f)
	if err != nil {
		return req, 0, 0, fmt.Errorf("image: %w", err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err == nil && int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		err = fmt.Errorf("%d×%d pixels: at most %d megapixels", cfg.Width, cfg.Height, maxImagePixels>>20)
	}
	if err == nil {
		_, _, err = image.Decode(bytes.NewReader(raw))
	}
	if err != nil {
		return req, 0, 0, fmt.Errorf("image: invalid image data: %w", err)
	}
	return req, cfg.Width, cfg.Height, nil
}

// imageReply is OpenAI's images reply: n PNGs of w×h, as b64_json (the
// default) or, for response_format url, as data URLs.
func imageReply(w, h, n int, format string) map[string]any {
	b64 := solidPNG(w, h)
	data := make([]map[string]string, n)
	for i := range data {
		if format == "url" {
			data[i] = map[string]string{"url": "data:image/png;base64," + b64}
		} else {
			data[i] = map[string]string{"b64_json": b64}
		}
	}
	return map[string]any{"created": time.Now().Unix(), "data": data, "size": fmt.Sprintf("%dx%d", w, h), "output_format": "png"}
}

var (
	pngMu    sync.Mutex
	pngCache = map[[2]int]string{}
)

// solidPNG is a w×h one-colour PNG, base64-encoded, made once per size (at
// most 64 sizes are kept).
func solidPNG(w, h int) string {
	pngMu.Lock()
	defer pngMu.Unlock()
	if b, ok := pngCache[[2]int{w, h}]; ok {
		return b
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = color.Gray{Y: 0x80}.Y
	}
	var buf bytes.Buffer
	_ = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img) // a bytes.Buffer does not fail
	b := base64.StdEncoding.EncodeToString(buf.Bytes())
	if len(pngCache) >= 64 {
		clear(pngCache)
	}
	pngCache[[2]int{w, h}] = b
	return b
}
