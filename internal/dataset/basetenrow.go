package dataset

// This file decodes and checks the rows of a Baseten Parquet trace
// (baseten.go reads and indexes them).

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// decode checks and decodes a row as AIPerf's BasetenTrace model reads it.
func (b *basetenFile) decode(row parquet.Row) (basetenRow, []problem) {
	var r basetenRow
	var ps []problem
	need := func(field string, dst *int64, lo int64) {
		v, p := scalarInt(b.values(row, field), field, lo)
		switch {
		case p != nil:
			ps = append(ps, *p)
		case v == nil:
			ps = append(ps, problemf(field, "required: expected %s", intWant(lo)))
		default:
			*dst = *v
		}
	}
	need(btTime, &r.ts, 0)
	need(btInput, &r.input, 0)
	need(btOutput, &r.output, 0)
	switch vs := b.values(row, btPrompt); {
	case len(vs) == 0 || vs[0].IsNull():
		ps = append(ps, problemf(btPrompt, "required: expected the completion prompt (a string), got null"))
	case vs[0].Kind() != parquet.ByteArray || !utf8.Valid(vs[0].ByteArray()):
		ps = append(ps, problemf(btPrompt, "expected a string, got %s", kindWord(vs[0])))
	default:
		r.prompt = string(vs[0].ByteArray())
	}
	for _, v := range b.values(row, btHashes) {
		if v.IsNull() {
			continue // a null or empty list
		}
		if n, ok := intValue(v); ok && n >= 0 {
			r.hashes = append(r.hashes, n)
			continue
		}
		ps = append(ps, problemf(btHashes, "expected a list of non-negative integers, got an element %s", valueWord(v)))
		break
	}
	if v, p := scalarInt(b.values(row, btBlock), btBlock, 1); p != nil {
		ps = append(ps, *p)
	} else if v != nil {
		r.block = *v
	}
	if b.session != "" {
		id, p := sessionValue(b.values(row, b.session), b.session)
		if p != nil {
			ps = append(ps, *p)
		}
		r.session = id
	}
	return r, ps
}

// sessionValue is a row's session id: a string, or a non-negative integer
// (poor_man_session_id is always one), or nil for null.
func sessionValue(vs []parquet.Value, field string) (*string, *problem) {
	if len(vs) == 0 || vs[0].IsNull() {
		return nil, nil
	}
	v := vs[0]
	if n, ok := intValue(v); ok && n >= 0 {
		s := strconv.FormatInt(n, 10)
		return &s, nil
	}
	if v.Kind() == parquet.ByteArray && field == btSession {
		s := string(v.ByteArray())
		return &s, nil
	}
	want := "a string or a non-negative integer"
	if field == btPoorMan {
		want = "a non-negative integer"
	}
	p := problemf(field, "expected %s, got %s", want, valueWord(v))
	return nil, &p
}

// scalarInt reads an optional integer column of at least lo: nil for
// null or absent.
func scalarInt(vs []parquet.Value, field string, lo int64) (*int64, *problem) {
	if len(vs) == 0 || vs[0].IsNull() {
		return nil, nil
	}
	n, ok := intValue(vs[0])
	if !ok || n < lo {
		p := problemf(field, "expected %s, got %s", intWant(lo), valueWord(vs[0]))
		return nil, &p
	}
	return &n, nil
}

func intWant(lo int64) string {
	if lo == 0 {
		return "a non-negative integer"
	}
	return fmt.Sprintf("an integer of at least %d", lo)
}

// intValue reads an integer value; a floating-point one counts when it is
// whole (as pydantic's int accepts 3.0).
func intValue(v parquet.Value) (int64, bool) {
	switch v.Kind() {
	case parquet.Int32:
		return int64(v.Int32()), true
	case parquet.Int64:
		return v.Int64(), true
	case parquet.Float, parquet.Double:
		f := v.Double()
		if v.Kind() == parquet.Float {
			f = float64(v.Float())
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	}
	return 0, false
}

// valueWord quotes a value for an error message.
func valueWord(v parquet.Value) string {
	switch v.Kind() {
	case parquet.ByteArray:
		return "the string " + brief(string(v.ByteArray()))
	case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
		return v.String()
	}
	return kindWord(v)
}

func kindWord(v parquet.Value) string { return "a " + strings.ToLower(v.Kind().String()) + " value" }
