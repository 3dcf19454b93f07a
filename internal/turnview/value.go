package turnview

import "strconv"

// value reads any value, writing its text to out (nil: skipped): a
// string's characters quoted, an object or array compactly, as JSON
// without the escapes. It shows content that is neither text nor parts.
func (s *scanner) value(out sink) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		return s.echoObject(out)
	case c == '[':
		return s.echoArray(out)
	case c == '"':
		put(out, `"`)
		if err := s.str(out); err != nil {
			return err
		}
		put(out, `"`)
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number(out)
	case c == 't':
		return s.literal("true", out)
	case c == 'f':
		return s.literal("false", out)
	case c == 'n':
		return s.literal("null", out)
	}
	_, _ = s.next()
	return s.errorf("want a JSON value, got %s", show(c))
}

func (s *scanner) echoObject(out sink) error {
	n := 0
	put(out, "{")
	err := s.object(func(key string) error {
		if n++; n > 1 {
			put(out, ",")
		}
		put(out, strconv.Quote(key)+":")
		return s.value(out)
	})
	put(out, "}")
	return err
}

func (s *scanner) echoArray(out sink) error {
	n := 0
	put(out, "[")
	err := s.array(func() error {
		if n++; n > 1 {
			put(out, ",")
		}
		return s.value(out)
	})
	put(out, "]")
	return err
}

// put writes text to out, if any.
func put(out sink, text string) {
	if out != nil {
		out.write([]byte(text))
	}
}

// literal reads true, false or null.
func (s *scanner) literal(word string, out sink) error {
	if _, err := s.next(); err != nil {
		return err
	}
	for i := 1; i < len(word); i++ {
		c, err := s.byte()
		if err != nil {
			return err
		}
		if c != word[i] {
			return s.errorf("invalid JSON literal (want %s)", word)
		}
	}
	put(out, word)
	return nil
}

// maxNumberText is the most of a number's text kept: a longer number is
// read to its end but shown cut (and is no integer of ours).
const maxNumberText = 64

// number reads a number, checked against JSON's grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number(out sink) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	var text []byte
	take := func() error { // c is part of the number: read the next
		if len(text) < maxNumberText {
			text = append(text, c)
		}
		c, err = s.byte()
		return err
	}
	digits := func() (n int, first byte, err error) {
		for first = c; c >= '0' && c <= '9'; n++ {
			if err := take(); err != nil {
				return n, first, err
			}
		}
		return n, first, nil
	}
	if c == '-' {
		if err := take(); err != nil {
			return err
		}
	}
	if n, first, err := digits(); err != nil || n == 0 || n > 1 && first == '0' {
		return numErr(s, err)
	}
	if c == '.' {
		if err := take(); err != nil {
			return err
		}
		if n, _, err := digits(); err != nil || n == 0 {
			return numErr(s, err)
		}
	}
	if c == 'e' || c == 'E' {
		if err := take(); err != nil {
			return err
		}
		if c == '+' || c == '-' {
			if err := take(); err != nil {
				return err
			}
		}
		if n, _, err := digits(); err != nil || n == 0 {
			return numErr(s, err)
		}
	}
	_ = s.r.UnreadByte() // the byte after the number
	if out != nil {
		out.write(text)
	}
	return nil
}

func numErr(s *scanner, err error) error {
	if err != nil {
		return err
	}
	return s.errorf("invalid JSON number")
}

// scalar is a small value read whole: a string (cut at its limit), a
// number's text, true, false or null; an object or array is skipped, only
// its kind kept.
type scalar struct {
	kind byte // '"', '0', 't', 'f', 'n', '{' or '['
	text string
}

// truthy is Python's truth of the value, as AIPerf tests it.
func (v scalar) truthy() bool {
	switch v.kind {
	case '"':
		return v.text != ""
	case '0':
		f, err := strconv.ParseFloat(v.text, 64)
		return err != nil || f != 0
	case 't', '{', '[':
		return true
	}
	return false
}

// int is the value as an integer (a whole float too), if it is one.
func (v scalar) int() (int64, bool) {
	if v.kind != '0' {
		return 0, false
	}
	if n, err := strconv.ParseInt(v.text, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(v.text, 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// scalar reads a value as a scalar, a string cut at limit characters.
func (s *scanner) scalar(limit int) (scalar, error) {
	c, err := s.peek()
	if err != nil {
		return scalar{}, err
	}
	switch {
	case c == '"':
		t := newText(limit, false)
		err = s.str(t)
		return scalar{'"', t.String()}, err
	case c == '-' || c >= '0' && c <= '9':
		t := newText(maxNumberText, false)
		err = s.number(t)
		return scalar{'0', t.String()}, err
	}
	return scalar{kind: c}, s.value(nil)
}
