// Added to the ardanlabs/jinja fork: the operations that walk a value
// (print, compare, encode), upstream's printValue, Value.String,
// Value.Equals, compareValues, containsValue, encodeValueJSON and
// valueToGo, charged to the render's meter and bounded in depth.

package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// writer builds a string, charging each piece before it is written.
type writer struct {
	m *meter
	b strings.Builder
}

func (w *writer) str(s string) {
	w.m.alloc(int64(len(s)))
	w.b.WriteString(s)
}

func (w *writer) byte(c byte) {
	w.m.alloc(1)
	w.b.WriteByte(c)
}

// str is v as a template prints it: strings as they are, None and
// Undefined as nothing, lists and dicts as Python's repr.
func (m *meter) str(v Value) string {
	switch v.kind {
	case KindUndefined, KindNone, KindCallable:
		return ""
	case KindString:
		return v.AsString()
	case KindList, KindDict:
		return m.repr(v)
	}
	return scalarString(v)
}

// scalarString prints a bool, an int or a float.
func scalarString(v Value) string {
	switch v.kind {
	case KindBool:
		if v.AsBool() {
			return "True"
		}
		return "False"
	case KindInt:
		return strconv.FormatInt(v.AsInt(), 10)
	case KindFloat:
		return strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
	}
	return ""
}

// repr is v's Python-style representation.
func (m *meter) repr(v Value) string {
	w := &writer{m: m}
	w.repr(v, 0)
	return w.b.String()
}

func (w *writer) repr(v Value, depth int) {
	nest(depth)
	switch v.kind {
	case KindUndefined:
		w.str("Undefined")
	case KindNone:
		w.str("None")
	case KindString:
		w.byte('\'')
		w.str(v.AsString())
		w.byte('\'')
	case KindList:
		w.byte('[')
		for i, item := range v.AsList().Items {
			if i > 0 {
				w.str(", ")
			}
			w.repr(item, depth+1)
		}
		w.byte(']')
	case KindDict:
		d := v.AsDict()
		w.byte('{')
		for i, key := range d.Keys {
			if i > 0 {
				w.str(", ")
			}
			w.byte('\'')
			w.str(key)
			w.str("': ")
			w.repr(d.Data[key], depth+1)
		}
		w.byte('}')
	case KindCallable:
		w.str("<callable " + v.v.(Callable).Name + ">")
	default:
		w.str(scalarString(v))
	}
}

// valuesEqual is ==: numbers across int and float, None to None, else
// equal.
func (m *meter) valuesEqual(a, b Value) bool {
	if a.IsNumber() && b.IsNumber() {
		return toFloat64(a) == toFloat64(b)
	}
	if a.IsNone() && b.IsNone() {
		return true
	}
	return m.equal(a, b, 0)
}

// equal reports whether a and b hold the same value (Value.Equals).
func (m *meter) equal(a, b Value, depth int) bool {
	nest(depth)
	m.step()
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case KindUndefined, KindNone:
		return true
	case KindBool:
		return a.AsBool() == b.AsBool()
	case KindInt:
		return a.AsInt() == b.AsInt()
	case KindFloat:
		return a.AsFloat() == b.AsFloat()
	case KindString:
		x, y := a.AsString(), b.AsString()
		if len(x) == len(y) {
			m.scan(len(x))
		}
		return x == y
	case KindList:
		x, y := a.AsList(), b.AsList()
		if x.Len() != y.Len() {
			return false
		}
		for i := range x.Items {
			if !m.equal(x.Items[i], y.Items[i], depth+1) {
				return false
			}
		}
		return true
	case KindDict:
		x, y := a.AsDict(), b.AsDict()
		if x.Len() != y.Len() {
			return false
		}
		for _, key := range x.Keys {
			yv, ok := y.Get(key)
			if !ok || !m.equal(x.Data[key], yv, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// compare orders a and b as numbers, then as strings.
func (m *meter) compare(a, b Value) int {
	if a.IsString() {
		m.scan(len(a.AsString()))
	}
	if b.IsString() {
		m.scan(len(b.AsString()))
	}
	return compareValues(a, b)
}

// contains is Python's in.
func (m *meter) contains(container, item Value) bool {
	switch {
	case container.IsList():
		for _, v := range container.AsList().Items {
			if m.equal(v, item, 0) {
				return true
			}
		}
		return false
	case container.IsDict() && item.IsString():
		return container.AsDict().Has(item.AsString())
	case container.IsString() && item.IsString():
		m.scan(len(container.AsString()))
		return strings.Contains(container.AsString(), item.AsString())
	}
	return false
}

// json writes v's JSON encoding into w (encodeValueJSON).
func (w *writer) json(v Value, itemSeparator, keySeparator string, depth int) error {
	nest(depth)
	switch v.kind {
	case KindBool:
		w.str(strconv.FormatBool(v.AsBool()))
	case KindInt:
		w.str(scalarString(v))
	case KindFloat:
		f := v.AsFloat()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("tojson: cannot encode %v", f)
		}
		w.str(strconv.FormatFloat(f, 'g', -1, 64))
	case KindString:
		return w.jsonString(v.AsString())
	case KindList:
		w.byte('[')
		for i, item := range v.AsList().Items {
			if i > 0 {
				w.str(itemSeparator)
			}
			if err := w.json(item, itemSeparator, keySeparator, depth+1); err != nil {
				return err
			}
		}
		w.byte(']')
	case KindDict:
		d := v.AsDict()
		w.byte('{')
		for i, key := range d.Keys {
			if i > 0 {
				w.str(itemSeparator)
			}
			if err := w.jsonString(key); err != nil {
				return err
			}
			w.str(keySeparator)
			if err := w.json(d.Data[key], itemSeparator, keySeparator, depth+1); err != nil {
				return err
			}
		}
		w.byte('}')
	default:
		w.str("null")
	}
	return nil
}

// jsonString writes s as a JSON string (at most six bytes a byte of s,
// charged once written).
func (w *writer) jsonString(s string) error {
	n := w.b.Len()
	err := encodeJSONString(&w.b, s)
	w.m.alloc(int64(w.b.Len() - n))
	return err
}

// toGo converts v to plain Go values for json.Marshal (valueToGo).
func (m *meter) toGo(v Value, depth int) any {
	nest(depth)
	m.step()
	switch v.kind {
	case KindBool:
		return v.AsBool()
	case KindInt:
		return v.AsInt()
	case KindFloat:
		return v.AsFloat()
	case KindString:
		return v.AsString()
	case KindList:
		list := v.AsList()
		m.allocItems(list.Len())
		out := make([]any, list.Len())
		for i, item := range list.Items {
			out[i] = m.toGo(item, depth+1)
		}
		return out
	case KindDict:
		d := v.AsDict()
		m.allocItems(d.Len())
		out := make(map[string]any, d.Len())
		for _, key := range d.Keys {
			out[key] = m.toGo(d.Data[key], depth+1)
		}
		return out
	}
	return nil
}
