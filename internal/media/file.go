package media

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// Bounds of a media file an input file names: larger ones are refused.
const (
	MaxMediaFile = 64 << 20  // an image or an audio
	MaxVideoFile = 512 << 20 // a video
)

// maxFile is the largest file of a kind.
func maxFile(kind Kind) int64 {
	if kind == Video {
		return MaxVideoFile
	}
	return MaxMediaFile
}

// Load reads a local media file of the given kind, checks that it is one
// (an image that decodes, a WAV or MP3 audio, an MP4 or WebM video) and not
// larger than its bound, and returns it as a data URI.
func Load(kind Kind, path string) (Item, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return Item{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Item{}, err
	}
	if st.Size() > maxFile(kind) {
		return Item{}, fmt.Errorf("%s is %d bytes: an %s may be at most %d MiB", path, st.Size(), kind, maxFile(kind)>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile(kind)+1))
	if err != nil {
		return Item{}, err
	}
	it, err := FromBytes(kind, b)
	if err != nil {
		return Item{}, fmt.Errorf("%s: %w", path, err)
	}
	return it, nil
}

// FromDataURI checks a data URI of the given kind as Load checks a file.
func FromDataURI(kind Kind, uri string) (Item, error) {
	head, data, ok := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	if !ok || !strings.HasSuffix(head, ";base64") {
		return Item{}, errors.New("a data URI must be data:<type>;base64,<data>")
	}
	if int64(len(data)) > maxFile(kind)*4/3+4 {
		return Item{}, fmt.Errorf("the data URI holds more than the %d MiB an %s may have", maxFile(kind)>>20, kind)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Item{}, fmt.Errorf("the data URI is not base64: %w", err)
	}
	return FromBytes(kind, b)
}

// FromBytes checks a media file's bytes and returns it as a data URI.
func FromBytes(kind Kind, b []byte) (Item, error) {
	switch kind {
	case Image:
		img, err := DecodeImage(b)
		if err != nil {
			return Item{}, err
		}
		_, format, _ := image.DecodeConfig(bytes.NewReader(b))
		it := encoded(Image, format, "image/"+format, b)
		it.Width, it.Height = img.Bounds().Dx(), img.Bounds().Dy()
		return it, nil
	case Audio:
		if w, err := ParseWAV(b); err == nil {
			it := encoded(Audio, "wav", "audio/wav", b)
			it.Seconds = w.Seconds()
			return it, nil
		} else if !isMP3(b) {
			return Item{}, fmt.Errorf("not a WAV or MP3 audio (%w)", err)
		}
		return encoded(Audio, "mp3", "audio/mpeg", b), nil
	case Video:
		format := FormatWebM
		if len(b) >= 12 && string(b[4:8]) == "ftyp" {
			format = FormatMP4
		} else if !bytes.HasPrefix(b, []byte{0x1a, 0x45, 0xdf, 0xa3}) {
			return Item{}, errors.New("not an MP4 or WebM video")
		}
		it := encoded(Video, format, "video/"+format, b)
		if info, err := ProbeVideo(b); err == nil { // a header without them is still sent
			it.Width, it.Height, it.Seconds = info.Width, info.Height, info.Seconds
		}
		return it, nil
	}
	return Item{}, fmt.Errorf("unknown media kind %d", kind)
}

// isMP3 reports whether b starts an MP3 stream: an ID3 tag, or an MPEG
// audio frame header (11 sync bits, layer III).
func isMP3(b []byte) bool {
	if bytes.HasPrefix(b, []byte("ID3")) {
		return true
	}
	return len(b) >= 4 && b[0] == 0xff && b[1]&0xe0 == 0xe0 && b[1]&0x06 == 0x02
}

// WAV is what a WAV file's header says.
type WAV struct {
	SampleRate, Channels, BitsPerSample int
	// DataBytes is the size of the samples (the data chunk).
	DataBytes int64
}

// Seconds is the duration: data bytes over bytes a second.
func (w WAV) Seconds() float64 {
	return float64(w.DataBytes) / float64(w.SampleRate*w.Channels*w.BitsPerSample/8)
}

// ParseWAV reads a RIFF/WAVE header: its fmt chunk (PCM or IEEE float)
// and the size of its data chunk.
func ParseWAV(b []byte) (WAV, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return WAV{}, errors.New("no RIFF/WAVE header")
	}
	var w WAV
	fmtSeen := false
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int64(binary.LittleEndian.Uint32(b[off+4:off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if size < 16 || int64(body)+16 > int64(len(b)) {
				return WAV{}, errors.New("a short fmt chunk")
			}
			format := binary.LittleEndian.Uint16(b[body:])
			if format != 1 && format != 3 && format != 0xfffe {
				return WAV{}, fmt.Errorf("audio format %d: expected PCM (1), IEEE float (3) or extensible", format)
			}
			w.Channels = int(binary.LittleEndian.Uint16(b[body+2:]))
			w.SampleRate = int(binary.LittleEndian.Uint32(b[body+4:]))
			w.BitsPerSample = int(binary.LittleEndian.Uint16(b[body+14:]))
			fmtSeen = true
		case "data":
			if !fmtSeen {
				return WAV{}, errors.New("the data chunk comes before the fmt chunk")
			}
			if w.Channels < 1 || w.SampleRate < 1 || w.BitsPerSample < 8 || w.BitsPerSample%8 != 0 {
				return WAV{}, fmt.Errorf("a fmt chunk of %d channels, %d Hz, %d bits", w.Channels, w.SampleRate, w.BitsPerSample)
			}
			if size > int64(len(b)-body) {
				return WAV{}, fmt.Errorf("a data chunk of %d bytes in a file that holds %d after its header: truncated", size, len(b)-body)
			}
			w.DataBytes = size
			return w, nil
		}
		off = body + int(size) + int(size&1)
		if size > int64(len(b)) {
			break
		}
	}
	return WAV{}, errors.New("no data chunk")
}
