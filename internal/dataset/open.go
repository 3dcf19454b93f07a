package dataset

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/inputfile"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// Open returns the dataset o describes: the conversations of o.InputFile
// read as o.CustomType (detected from the first record when "") or as
// o.PublicDataset, or synthetic conversations when there is no file. A
// file is checked whole before Open returns: every malformed record is
// reported as a *LineError (up to 50, joined with errors.Join), so nothing
// is sent from a file with a problem. Every error Open returns is about
// the options or the input, except ctx's.
func Open(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	if err := o.validateOpen(); err != nil {
		return nil, fmt.Errorf("dataset options: %w", err)
	}
	if o.InputFile == "" {
		return openSynthetic(ctx, tok, o)
	}
	st, err := os.Stat(o.InputFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("input file: %q is not a valid file or directory", o.InputFile)
		}
		return nil, fmt.Errorf("input file: %w", err)
	}
	if o.PublicDataset != "" {
		return openPublic(ctx, tok, o, st.IsDir())
	}
	kind := o.CustomType
	if st.IsDir() {
		if kind == TypeWekaTrace || kind == "" && isWekaDir(o.InputFile) {
			return openWekaChecked(ctx, tok, o)
		}
		if err := o.Replay.refuse("a directory"); err != nil {
			return nil, err
		}
		if err := errors.Join(o.Replay.refuseFormatControls("a directory of "+cmp.Or(kind, "files")),
			o.refuseWekaBasis("a directory of "+cmp.Or(kind, "files"))); err != nil {
			return nil, err
		}
		switch {
		case o.UUIDAndStrip:
			return nil, uuidStripRefused("directory")
		case kind == TypeRawPayload || kind == "" && isRawDir(o.InputFile):
			return openRawDir(ctx, tok, o)
		case kind == TypeDAGJSONL:
			return nil, fmt.Errorf("%s dataset: %s is a directory: give one JSONL file, one conversation a line (a conversation "+
				"and the ones it starts must be in the same file)", kind, o.InputFile)
		case kind == TypeSageMakerCapture:
			return nil, fmt.Errorf("%s dataset: %s is a directory: give one capture file (concatenate them: "+
				"find %s -name '*.jsonl' -exec cat {} + > all_captures.jsonl)", kind, o.InputFile, o.InputFile)
		case kind != "" && kind != TypeRandomPool:
			return nil, fmt.Errorf("%s dataset: %s is a directory: only random_pool (one pool per file), raw_payload "+
				"(one conversation per file) and weka_trace (one trace per file) read a directory", kind, o.InputFile)
		}
		return openRandomPool(ctx, tok, o, true)
	}
	if kind == "" {
		if kind, err = detectFile(ctx, o.InputFile); err != nil {
			return nil, err
		}
	}
	if kind == TypeTraceLab {
		return openTraceLab(ctx, tok, o)
	}
	if o.UUIDAndStrip && kind != TypeSingleTurn {
		return nil, uuidStripRefused(kind)
	}
	if err := errors.Join(o.Replay.refuseFormatControls(kind), o.refuseWekaBasis(kind)); err != nil {
		return nil, err
	}
	if kind == TypeRandomPool || kind == TypeInputsJSON || kind == TypeDAGJSONL {
		if err := o.Replay.refuse(kind); err != nil {
			return nil, err
		}
	}
	switch kind {
	case TypeRandomPool:
		return openRandomPool(ctx, tok, o, false)
	case TypeInputsJSON:
		return openInputsJSON(ctx, tok, o)
	case TypeBasetenTrace:
		if err := o.Replay.refuse(kind); err != nil {
			return nil, err
		}
		return openBaseten(ctx, tok, o)
	case TypeWekaTrace:
		return openWekaChecked(ctx, tok, o)
	case TypeDAGJSONL:
		return openDAGJSONL(ctx, tok, o)
	}
	if IsSpeedBenchType(kind) {
		return openSpeedBench(ctx, tok, o, kind)
	}
	if isParquet(o.InputFile) {
		return nil, fmt.Errorf("%s dataset: %s is a Parquet file: only baseten_trace reads Parquet here", kind, o.InputFile)
	}
	return openJSONL(ctx, tok, o, kind)
}

// openPublic opens --public-dataset's local file.
func openPublic(ctx context.Context, tok tokenizer.Tokenizer, o Options, dir bool) (Dataset, error) {
	name := o.PublicDataset
	if err := errors.Join(o.Replay.refuse("--public-dataset "+name), o.refuseWekaBasis("--public-dataset "+name)); err != nil {
		return nil, err
	}
	if o.FixedSchedule {
		return nil, fmt.Errorf("%s dataset: a fixed schedule needs timestamps, and its records have none", name)
	}
	if dir {
		return nil, fmt.Errorf("%s dataset: %s is a directory: give the dataset's file (JSON, JSON Lines or Parquet)", name, o.InputFile)
	}
	if name == PublicShareGPT {
		return openShareGPT(ctx, tok, o)
	}
	return openPromptDataset(ctx, tok, o)
}

// openJSONL indexes a single_turn, multi_turn, mooncake_trace or
// bailian_trace file.
func openJSONL(ctx context.Context, tok tokenizer.Tokenizer, o Options, kind string) (Dataset, error) {
	d := &fileDataset{kind: kind, path: o.InputFile, o: o, tok: tok, block: o.blockSizeOf(kind)}
	d.media = newFileMedia(o.InputFile)
	check := checkerFor(kind, d.block, d.media)
	switch kind {
	case TypeBurstGPTTrace:
		var err error
		if d.burst, err = readBurstHeader(o.InputFile); err != nil {
			return nil, fmt.Errorf("%s dataset: %w", kind, err)
		}
		check = d.burst.check
	case TypeSageMakerCapture:
		var err error
		if d.captured, err = captureStart(ctx, o.InputFile); err != nil {
			return nil, fmt.Errorf("%s dataset: %s: %w", kind, o.InputFile, err)
		}
		check = checkCapture(d.captured)
	}
	if IsTraceType(kind) {
		var err error
		if d.words, err = blockWords(tok); err != nil {
			return nil, fmt.Errorf("%s dataset: %w", kind, err)
		}
	}
	f, err := inputfile.Open(o.InputFile)
	if err != nil {
		return nil, fmt.Errorf("%s dataset: %w", kind, err)
	}
	d.f, d.list, d.stamp = f, []*os.File{f}, stampOf(f)
	if err := indexFile(ctx, d, withTypeHint(kind, check)); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s dataset: %w", kind, err)
	}
	return d, nil
}

// checkerFor returns the line check of a record type.
func checkerFor(kind string, blockSize int, fm *fileMedia) func([]byte) (rowInfo, []problem) {
	switch kind {
	case TypeSingleTurn:
		return func(line []byte) (rowInfo, []problem) { return checkSingleTurn(line, fm) }
	case TypeMultiTurn:
		return func(line []byte) (rowInfo, []problem) { return checkMultiTurn(line, fm) }
	case TypeRandomPool:
		return func(line []byte) (rowInfo, []problem) { return checkPoolRow(line, fm) }
	case TypeBailianTrace:
		return func(line []byte) (rowInfo, []problem) { return checkBailian(line, blockSize) }
	case TypeRawPayload:
		return checkRawPayload
	case TypeSageMakerCapture:
		return checkCapture(0)
	}
	return func(line []byte) (rowInfo, []problem) { return checkMooncake(line, blockSize) }
}

// withTypeHint wraps a line check: a line that fails it but is a valid
// record of another type is reported as such (one file holds one type).
func withTypeHint(kind string, check func([]byte) (rowInfo, []problem)) func([]byte) (rowInfo, []problem) {
	return func(line []byte) (rowInfo, []problem) {
		info, ps := check(line)
		if ps == nil {
			return info, nil
		}
		// raw_payload takes any body with a messages list: naming it would
		// hide what is wrong with a messages row of the file's own type
		if other, err := detectLine(context.Background(), line); err == nil && other != kind && other != TypeRawPayload {
			return rowInfo{}, []problem{problemf("", "a %s record in a %s file: one file holds one record type", other, kind)}
		}
		return info, ps
	}
}

// Detected is what Detect finds in an input file's first record.
type Detected struct {
	// Type is the record type: the given one, or the one detected.
	Type string
	// Timestamped reports that the first record carries a timestamp (its
	// first turn's, for multi_turn): the condition on which AIPerf
	// promotes a trace to a fixed schedule.
	Timestamped bool
}

// Detect reads the first record of path (a directory is a random_pool) and
// returns its type, detected as AIPerf does when customType is "", and
// whether it carries a timestamp.
func Detect(path, customType string) (Detected, error) {
	return DetectContext(context.Background(), path, customType)
}

// DetectContext is Detect that gives up with ctx's error once ctx is done,
// between its passes over the first record (which may hold 256 MiB).
func DetectContext(ctx context.Context, path, customType string) (Detected, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Detected{}, fmt.Errorf("input file: %q is not a valid file or directory", path)
	}
	if st.IsDir() {
		switch {
		case customType == TypeWekaTrace || customType == "" && isWekaDir(path):
			return Detected{Type: TypeWekaTrace, Timestamped: true}, nil // every request's t
		case customType == TypeRawPayload || customType == "" && isRawDir(path):
			return Detected{Type: TypeRawPayload}, nil
		case customType != "" && customType != TypeRandomPool:
			return Detected{}, fmt.Errorf("%s dataset: %s is a directory: only random_pool (one pool per file), raw_payload "+
				"(one conversation per file) and weka_trace (one trace per file) read a directory", customType, path)
		}
		return Detected{Type: TypeRandomPool}, nil
	}
	if customType == TypeTraceLab || customType == "" && isTraceLabFile(path) {
		return Detected{Type: TypeTraceLab, Timestamped: true}, nil // its rounds' timing events
	}
	if customType == TypeInputsJSON || customType == "" && isInputsJSON(path) {
		return Detected{Type: TypeInputsJSON}, nil
	}
	if customType == TypeWekaTrace || customType == "" && isWekaFile(path) {
		return Detected{Type: TypeWekaTrace, Timestamped: true}, nil // every request's t
	}
	if customType == TypeBasetenTrace || customType == "" && hasBasetenColumns(path) {
		return Detected{Type: TypeBasetenTrace, Timestamped: true}, nil // its timestamp_start_unix_ms column
	}
	if customType == "" && isParquet(path) {
		return Detected{}, notBaseten(path)
	}
	if customType == TypeBurstGPTTrace || customType == "" && isBurstGPT(path) {
		return Detected{Type: TypeBurstGPTTrace, Timestamped: true}, nil // its Timestamp column
	}
	if err := ctx.Err(); err != nil {
		return Detected{}, fmt.Errorf("detect the record type of %s: %w", path, err)
	}
	line, no, err := firstLine(ctx, path)
	if err != nil {
		return Detected{}, err
	}
	kind := customType
	if kind == "" {
		if kind, err = detectLine(ctx, line); err != nil {
			return Detected{}, placed(path, no, err)
		}
	}
	var probe struct {
		Timestamp *float64 `json:"timestamp"`
		Turns     []struct {
			Timestamp *float64 `json:"timestamp"`
		} `json:"turns"`
	}
	_ = json.Unmarshal(line, &probe)
	ts := probe.Timestamp != nil
	switch kind {
	case TypeMultiTurn:
		ts = len(probe.Turns) > 0 && probe.Turns[0].Timestamp != nil
	case TypeSageMakerCapture:
		ts = true // its inferenceTime
	}
	return Detected{Type: kind, Timestamped: ts}, nil
}

// detectFile detects the record type of a file from its first record,
// giving up with ctx's error between its passes over it.
func detectFile(ctx context.Context, path string) (string, error) {
	for _, c := range []struct {
		is   func(string) bool
		kind string
	}{{isTraceLabFile, TypeTraceLab}, {hasBasetenColumns, TypeBasetenTrace}, {isWekaFile, TypeWekaTrace},
		{isParquet, ""}, {isInputsJSON, TypeInputsJSON}, {isBurstGPT, TypeBurstGPTTrace}} {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("detect the record type of %s: %w", path, err)
		}
		switch {
		case !c.is(path):
		case c.kind == "":
			return "", notBaseten(path)
		default:
			return c.kind, nil
		}
	}
	line, no, err := firstLine(ctx, path)
	if err != nil {
		return "", err
	}
	kind, err := detectLine(ctx, line)
	if err != nil {
		return "", placed(path, no, err)
	}
	return kind, nil
}

// placed places a detection error at line no of path.
func placed(path string, no int, err error) error {
	if ke, ok := err.(*keyedError); ok {
		return placeKeyed(path, no, ke)
	}
	var le *LineError
	if errors.As(err, &le) {
		le.Path, le.Line = path, no
		return fmt.Errorf("detect the record type (or give --custom-dataset-type): %w", le)
	}
	return err
}

// firstLine returns the first non-blank line of path and its number.
func firstLine(ctx context.Context, path string) ([]byte, int, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("input file: %w", err)
	}
	defer f.Close()
	first, firstNo, err := firstRecord(ctx, f)
	if err != nil {
		return nil, 0, fmt.Errorf("input file %s: %w", path, err)
	}
	if first == nil {
		return nil, 0, &LineError{Path: path, Msg: "no records: the file is empty or holds only blank lines"}
	}
	return first, firstNo, nil
}

// firstRecord is the first non-blank line of r and its number (nil when
// there is none).
func firstRecord(ctx context.Context, r io.Reader) (first []byte, no int, err error) {
	err = scanLines(ctx, r, func(line []byte, n int, _ int64) bool {
		first, no = append([]byte{}, line...), n
		return false
	})
	return first, no, err
}

// detectLine picks the record type of a first record as AIPerf does: its
// "type" if that names a known type (the record must then be valid), else
// the one type whose schema accepts it (random_pool needs its "type"). When
// no type accepts it but it has a dag_jsonl conversation's shape
// (isDAGLine), it is one; when its keys name another type (keyedType), the
// error is a *keyedError holding its problems as that type.
func detectLine(ctx context.Context, line []byte) (string, error) {
	var typed struct {
		Type *string `json:"type"`
	}
	if ps := decodeLine(line, &typed); ps != nil {
		return "", &LineError{Col: ps[0].Col, Field: ps[0].Field, Msg: ps[0].Msg}
	}
	if typed.Type != nil && slices.Contains(lineTypes, *typed.Type) {
		kind := *typed.Type
		if _, ps := checkerFor(kind, 0, nil)(line); ps != nil {
			return "", &LineError{Field: ps[0].Field, Msg: fmt.Sprintf("%s (the record's type is %s)", ps[0].Msg, kind)}
		}
		return kind, nil
	}
	if _, _, ps := checkSpeedBench(line, false); ps == nil {
		return "", &LineError{Msg: "a SPEED-Bench row (question_id, category, messages): give --custom-dataset-type " +
			"speed_bench_<config>, the split or category whose rows to send (aiperf profile --help lists them)"}
	}
	var fits []string
	for _, kind := range []string{TypeSingleTurn, TypeMultiTurn, TypeMooncakeTrace, TypeBailianTrace, TypeRawPayload, TypeSageMakerCapture} {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if _, ps := checkerFor(kind, 0, nil)(line); ps == nil {
			fits = append(fits, kind)
		}
	}
	switch len(fits) {
	case 0:
		if isDAGLine(line) {
			return TypeDAGJSONL, nil
		}
		if kind, marks := keyedType(line); kind != "" {
			if _, ps := checkerFor(kind, 0, nil)(line); len(ps) > 0 {
				return "", &keyedError{kind: kind, marks: marks, ps: ps}
			}
		}
		return "", &LineError{Msg: noLoader + ": specify --custom-dataset-type explicitly"}
	case 1:
		return fits[0], nil
	}
	return "", &LineError{Msg: fmt.Sprintf("multiple loaders can handle the data format: %s: specify --custom-dataset-type explicitly", strings.Join(fits, " and "))}
}

// IsTrace reports whether d is a trace (a mooncake_trace, bailian_trace or
// burst_gpt_trace file) or a replay of recorded bodies (inputs_json,
// raw_payload), which a run sends record by record, each once.
func IsTrace(d Dataset) bool {
	switch f := d.(type) {
	case *fileDataset:
		return IsTraceType(f.kind) || f.kind == TypeInputsJSON || f.kind == TypeRawPayload
	case *rawDir, *wekaSet:
		return true
	}
	return false
}

// Kind is the record type of d's input file: one of CustomTypes, or ""
// for synthetic data and a public dataset.
func Kind(d Dataset) string {
	switch f := d.(type) {
	case *fileDataset:
		return f.kind
	case *rawDir:
		return TypeRawPayload
	case *poolDataset:
		return TypeRandomPool
	case *wekaSet:
		return f.kind // weka_trace, or tracelab
	case *speedBenchSet:
		return f.kind
	case *dagSet:
		return TypeDAGJSONL
	}
	return ""
}

// Turns is the number of turns (requests) in one pass over d: after
// offsets are applied and system turns hoisted. It is 0 for a Dataset that
// Open did not return.
func Turns(d Dataset) int {
	if t, ok := d.(interface{ turnCount() int }); ok {
		return t.turnCount()
	}
	return 0
}

// openWekaChecked opens a weka_trace file or directory, refusing the replay
// controls it does not honour (the JSONL formats' but the idle-gap cap,
// baseten_trace's).
func openWekaChecked(ctx context.Context, tok tokenizer.Tokenizer, o Options) (Dataset, error) {
	if o.UUIDAndStrip {
		return nil, uuidStripRefused(TypeWekaTrace)
	}
	r := o.Replay
	r.TraceIdleGapCapMs = nil
	for _, err := range []error{r.refuse(TypeWekaTrace), r.refuseFormatControls(TypeWekaTrace)} {
		if err != nil {
			return nil, err
		}
	}
	return openWeka(ctx, tok, o)
}
