// Package media makes the images, audio and video a multimodal benchmark
// sends, and reads the ones an input file names.
//
// # Synthetic media
//
// Images are AIPerf's "noise" source: every pixel drawn at random (so that
// no two images are alike and a server cannot deduplicate them), at a width
// and height drawn from normal distributions, encoded as PNG or JPEG with
// the standard library. A directory source samples and resizes the images
// of a directory instead. Generation is deterministic for a seed: image j
// of a run depends on (seed, j) alone, so the same flags give the same
// bytes whatever the number of CPUs that generate them.
//
// # Memory
//
// Media are generated before the load starts, once per dataset entry, in
// parallel on every CPU, and kept only as their data URI (the compressed
// file base64-encoded, 4/3 of its size): the pixels of an image live only
// while it is encoded. What a run holds is therefore the sum of its data
// URIs plus, while generating, one image's pixels per CPU (4 bytes a
// pixel). A 1024×1024 noise PNG is about 3.1 MB (4.2 MB as a data URI), so
// 1,000 distinct ones hold about 4.2 GB; as JPEG (quality 75) they hold
// about a third of that (BenchmarkImages1024, docs/multimodal.md).
//
// # Items
//
// An Item is one media input ready to send: a data URI (or a URL passed
// through from an input file, sent as it is) and what is known of it
// (format, size in bytes, dimensions, duration). Items are immutable and
// shared by every request that sends them.
package media
