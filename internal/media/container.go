package media

import (
	"encoding/binary"
	"errors"
	"math"
)

// VideoInfo is what a video's container header says: its frame size and
// duration (0 when the header does not hold it, as in a WebM streamed
// without seeking back).
type VideoInfo struct {
	Width, Height int
	Seconds       float64
}

// ProbeVideo reads an MP4's moov (mvhd's duration, the first video tkhd's
// size) or a WebM's Segment (Info's Duration × TimecodeScale, the first
// video track's PixelWidth and PixelHeight). It decodes no frame.
func ProbeVideo(b []byte) (VideoInfo, error) {
	switch {
	case len(b) >= 12 && string(b[4:8]) == "ftyp":
		return probeMP4(b)
	case len(b) >= 4 && b[0] == 0x1a && b[1] == 0x45 && b[2] == 0xdf && b[3] == 0xa3:
		return probeWebM(b)
	}
	return VideoInfo{}, errors.New("not an MP4 or WebM video")
}

// probeMP4 walks the boxes down moov → mvhd and moov → trak → tkhd.
func probeMP4(b []byte) (VideoInfo, error) {
	var v VideoInfo
	var walk func(b []byte)
	walk = func(b []byte) {
		for len(b) >= 8 {
			size, kind := int(binary.BigEndian.Uint32(b)), string(b[4:8])
			hdr := 8
			if size == 1 && len(b) >= 16 {
				size, hdr = int(min(binary.BigEndian.Uint64(b[8:]), uint64(len(b)))), 16
			}
			if size == 0 || size > len(b) {
				size = len(b)
			}
			if size < hdr {
				return
			}
			body := b[hdr:size]
			switch kind {
			case "moov", "trak":
				walk(body)
			case "mvhd":
				if len(body) >= 20 && body[0] == 0 {
					scale, dur := binary.BigEndian.Uint32(body[12:]), binary.BigEndian.Uint32(body[16:])
					if scale > 0 {
						v.Seconds = float64(dur) / float64(scale)
					}
				} else if len(body) >= 32 && body[0] == 1 {
					scale, dur := binary.BigEndian.Uint32(body[20:]), binary.BigEndian.Uint64(body[24:])
					if scale > 0 {
						v.Seconds = float64(dur) / float64(scale)
					}
				}
			case "tkhd":
				if n := len(body); n >= 8 && v.Width == 0 {
					w, h := int(binary.BigEndian.Uint32(body[n-8:])>>16), int(binary.BigEndian.Uint32(body[n-4:])>>16)
					if w > 0 && h > 0 {
						v.Width, v.Height = w, h
					}
				}
			}
			b = b[size:]
		}
	}
	walk(b)
	if v.Width == 0 {
		return v, errors.New("an MP4 with no video track header")
	}
	return v, nil
}

// EBML element ids of the WebM header.
const (
	ebmlSegment   = 0x18538067
	ebmlInfo      = 0x1549a966
	ebmlScale     = 0x2ad7b1
	ebmlDuration  = 0x4489
	ebmlTracks    = 0x1654ae6b
	ebmlTrack     = 0xae
	ebmlVideo     = 0xe0
	ebmlPixelW    = 0xb0
	ebmlPixelH    = 0xba
	ebmlCluster   = 0x1f43b675
	ebmlUnknownSz = -1
)

// ebmlVint reads an EBML variable-length integer; keepMarker keeps the
// length bits (element ids). n is 0 when b does not hold one.
func ebmlVint(b []byte, keepMarker bool) (v int64, n int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	n = 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if n > 8 || len(b) < n {
		return 0, 0
	}
	v = int64(b[0])
	if !keepMarker {
		v &= int64(0xff >> n)
	}
	allOnes := v == int64(0xff>>n)
	for _, c := range b[1:n] {
		v = v<<8 | int64(c)
		allOnes = allOnes && c == 0xff
	}
	if !keepMarker && allOnes {
		return ebmlUnknownSz, n
	}
	return v, n
}

// probeWebM walks the EBML header down Segment → Info and → Tracks, up to
// the first Cluster.
func probeWebM(b []byte) (VideoInfo, error) {
	var v VideoInfo
	scale, dur := 1e6, 0.0
	var walk func(b []byte)
	walk = func(b []byte) {
		for len(b) > 0 {
			id, n := ebmlVint(b, true)
			if n == 0 {
				return
			}
			size, m := ebmlVint(b[n:], false)
			if m == 0 {
				return
			}
			start := n + m
			end := len(b)
			if size != ebmlUnknownSz && int64(start)+size <= int64(len(b)) {
				end = start + int(size)
			}
			body := b[start:end]
			switch id {
			case ebmlSegment, ebmlInfo, ebmlTracks, ebmlTrack, ebmlVideo:
				walk(body)
			case ebmlCluster:
				return // the header is over
			case ebmlScale:
				scale = float64(beUint(body))
			case ebmlDuration:
				switch len(body) {
				case 4:
					dur = float64(math.Float32frombits(binary.BigEndian.Uint32(body)))
				case 8:
					dur = math.Float64frombits(binary.BigEndian.Uint64(body))
				}
			case ebmlPixelW:
				if v.Width == 0 {
					v.Width = int(beUint(body))
				}
			case ebmlPixelH:
				if v.Height == 0 {
					v.Height = int(beUint(body))
				}
			}
			b = b[end:]
		}
	}
	walk(b[0:])
	if v.Width == 0 || v.Height == 0 {
		return v, errors.New("a WebM with no video track size")
	}
	v.Seconds = dur * scale / 1e9
	return v, nil
}

// beUint reads a big-endian unsigned integer of up to 8 bytes.
func beUint(b []byte) uint64 {
	var v uint64
	for _, c := range b[:min(len(b), 8)] {
		v = v<<8 | uint64(c)
	}
	return v
}
