package media

import (
	"encoding/base64"
	"strings"
)

// Kind is the modality of an Item.
type Kind uint8

// The modalities, in the order a chat message carries their parts (AIPerf's:
// texts, images, audios, videos).
const (
	Image Kind = iota + 1
	Audio
	Video
)

// String names the kind as AIPerf's input-file fields do.
func (k Kind) String() string {
	switch k {
	case Image:
		return "image"
	case Audio:
		return "audio"
	case Video:
		return "video"
	}
	return "media"
}

// Item is one media input ready to send.
type Item struct {
	Kind Kind
	// URL is a data URI (data:<mime>;base64,<data>) or a URL passed through
	// from an input file.
	URL string
	// Format is the file format: png, jpeg, wav, mp3, webm, mp4; "" for a
	// URL passed through whose format is not known.
	Format string
	// Bytes is the size of the encoded file (0 for a URL passed through).
	Bytes int
	// Width and Height are an image's or a video's size in pixels, when
	// known.
	Width, Height int
	// Seconds is an audio's or a video's duration, when known.
	Seconds float64
	// UUID is an image's vLLM multimodal cache id from an input file's
	// image_uuids, sent beside it as the part's "uuid"; URL is "" when
	// the image is a cache reference only (authored so, or stripped by
	// --uuid-and-strip).
	UUID string
	// plain: URL needs no escaping in a JSON string.
	plain bool
}

// JSONPlain reports whether the URL can be written inside a JSON string as
// it is: true for every data URI this package makes.
func (it Item) JSONPlain() bool { return it.plain }

// Data is the base64 payload of a data URI (the URL itself otherwise).
func (it Item) Data() string {
	if _, data, ok := strings.Cut(it.URL, ";base64,"); ok && strings.HasPrefix(it.URL, "data:") {
		return data
	}
	return it.URL
}

// dataURI builds the data URI of an encoded file.
func dataURI(mime string, b []byte) string {
	head := "data:" + mime + ";base64,"
	var sb strings.Builder
	sb.Grow(len(head) + base64.StdEncoding.EncodedLen(len(b)))
	sb.WriteString(head)
	enc := base64.NewEncoder(base64.StdEncoding, &sb)
	_, _ = enc.Write(b) // a strings.Builder does not fail
	_ = enc.Close()
	return sb.String()
}

// encoded is the Item of a file this package encoded.
func encoded(kind Kind, format, mime string, b []byte) Item {
	return Item{Kind: kind, URL: dataURI(mime, b), Format: format, Bytes: len(b), plain: true}
}

// PassThrough is the Item of a URL given in an input file, sent as it is.
func PassThrough(kind Kind, url string) Item {
	return Item{Kind: kind, URL: url, plain: jsonPlain(url)}
}

// jsonPlain reports whether s is written in a JSON string as it is (no
// quote, backslash, control character or non-ASCII byte).
func jsonPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}
