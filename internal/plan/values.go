package plan

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// setFromString parses a kong `default` tag value into f.
func setFromString(f reflect.Value, s string) error {
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		f.SetInt(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		f.SetFloat(x)
	case reflect.Slice:
		f.Set(reflect.ValueOf([]string{s}))
	default:
		return fmt.Errorf("unsupported kind %s", f.Kind())
	}
	return nil
}

// assign stores a loosely typed value (from Starlark, YAML or JSON) into f.
func assign(f reflect.Value, value any) error {
	if f.Kind() == reflect.Pointer {
		if value == nil {
			f.Set(reflect.Zero(f.Type()))
			return nil
		}
		nv := reflect.New(f.Type().Elem())
		if err := assign(nv.Elem(), value); err != nil {
			return err
		}
		f.Set(nv)
		return nil
	}
	bad := func() error {
		return fmt.Errorf("want %s, got %s", typeName(f.Type()), describe(value))
	}
	switch f.Kind() {
	case reflect.String:
		s, ok := value.(string)
		if !ok {
			return bad()
		}
		f.SetString(s)
	case reflect.Bool:
		b, ok := value.(bool)
		if !ok {
			return bad()
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int64:
		switch n := value.(type) {
		case int:
			f.SetInt(int64(n))
		case int64:
			f.SetInt(n)
		case float64:
			// -2^63 ≤ n < 2^63: int64(n) is undefined outside (NaN fails n == Trunc(n)).
			if n != math.Trunc(n) || n < math.MinInt64 || n >= -math.MinInt64 {
				return bad()
			}
			f.SetInt(int64(n))
		default:
			return bad()
		}
	case reflect.Float64:
		switch n := value.(type) {
		case int:
			f.SetFloat(float64(n))
		case int64:
			f.SetFloat(float64(n))
		case float64:
			f.SetFloat(n)
		default:
			return bad()
		}
	case reflect.Slice:
		var elems []any
		switch v := value.(type) {
		case []any:
			elems = v
		case []string:
			for _, e := range v {
				elems = append(elems, e)
			}
		default: // one value is a list of one
			elems = []any{value}
		}
		out := reflect.MakeSlice(f.Type(), len(elems), len(elems))
		for i, e := range elems {
			if assign(out.Index(i), e) != nil {
				return bad()
			}
		}
		f.Set(out)
	default:
		return fmt.Errorf("unsupported option kind %s", f.Kind())
	}
	return nil
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.Float64:
		return "float"
	case reflect.Slice:
		if e := typeName(t.Elem()); e != "string" {
			return e + " or list of " + e + "s"
		}
		return "string or list of strings"
	}
	return t.String()
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("bool %v", x)
	case int, int64:
		return fmt.Sprintf("int %v", x)
	case float64:
		return fmt.Sprintf("float %v", x)
	case []any, []string:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}
