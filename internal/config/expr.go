package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// value is the result of a {{ }} expression: an int64, a float64 or a
// string.
type value any

// Bounds on what an expression may cost: its source, a string it builds
// (by * or ~), and an exponent.
const (
	maxExprLen    = 1000
	maxExprString = 64 << 10
	maxExponent   = 1024
)

// evalExpr evaluates the Jinja expression src (the text between {{ and }})
// over vars. It supports what AIPerf's configs compute: numbers and quoted
// strings, variables, + - * / // % ** and ~ with parentheses, unary minus,
// and the filters int, float, round, abs and string. Anything else (tests,
// comparisons, calls, statements) is refused with a message saying so.
func evalExpr(src string, vars map[string]value) (value, error) {
	if len(src) > maxExprLen {
		return nil, fmt.Errorf("the expression is longer than %d characters", maxExprLen)
	}
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks, vars: vars}
	v, err := p.concat()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q: only arithmetic (+ - * / // %% ** ~), parentheses and the filters int, float, round, abs and string are supported", p.toks[p.pos].text)
	}
	return v, nil
}

type token struct {
	kind byte // 'n' number, 's' string, 'i' identifier, 'o' operator
	text string
}

var operators = []string{"**", "//", "+", "-", "*", "/", "%", "~", "(", ")", "|", ","}

func tokenize(src string) ([]token, error) {
	var out []token
	for i := 0; i < len(src); {
		c := rune(src[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == '_' ||
				src[j] == 'e' || src[j] == 'E' || (src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			out, i = append(out, token{'n', src[i:j]}), j
		case c == '\'' || c == '"':
			j := strings.IndexByte(src[i+1:], src[i])
			if j < 0 {
				return nil, errors.New("a string is not closed")
			}
			out, i = append(out, token{'s', src[i+1 : i+1+j]}), i+j+2
		case c == '_' || unicode.IsLetter(c):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] < 0x80 && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q", src[i:])
			}
			out, i = append(out, token{'i', src[i:j]}), j
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("unexpected %q: only arithmetic (+ - * / // %% ** ~), parentheses and filters are supported", src[i:i+1])
			}
			out, i = append(out, token{'o', op}), i+len(op)
		}
	}
	return out, nil
}

type exprParser struct {
	toks []token
	pos  int
	vars map[string]value
}

func (p *exprParser) peek(ops ...string) string {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == 'o' {
		for _, o := range ops {
			if p.toks[p.pos].text == o {
				return o
			}
		}
	}
	return ""
}

// concat is additive (~ additive)*: string concatenation, lowest.
func (p *exprParser) concat() (value, error) {
	return p.binary(p.additive, "~")
}

func (p *exprParser) additive() (value, error) { return p.binary(p.term, "+", "-") }

func (p *exprParser) term() (value, error) { return p.binary(p.unary, "*", "/", "//", "%") }

func (p *exprParser) binary(next func() (value, error), ops ...string) (value, error) {
	left, err := next()
	for err == nil {
		op := p.peek(ops...)
		if op == "" {
			return left, nil
		}
		p.pos++
		var right value
		if right, err = next(); err == nil {
			left, err = arith(op, left, right)
		}
	}
	return nil, err
}

func (p *exprParser) unary() (value, error) {
	if op := p.peek("-", "+"); op != "" {
		p.pos++
		v, err := p.unary()
		if err != nil || op == "+" {
			return v, err
		}
		return arith("-", int64(0), v)
	}
	return p.power()
}

// power is filtered (** unary)?, right-associative as in Jinja.
func (p *exprParser) power() (value, error) {
	base, err := p.filtered()
	if err != nil || p.peek("**") == "" {
		return base, err
	}
	p.pos++
	exp, err := p.unary()
	if err != nil {
		return nil, err
	}
	return arith("**", base, exp)
}

func (p *exprParser) filtered() (value, error) {
	v, err := p.primary()
	for err == nil && p.peek("|") != "" {
		p.pos++
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != 'i' {
			return nil, errors.New("a filter name must follow |")
		}
		name := p.toks[p.pos].text
		p.pos++
		var args []value
		if p.peek("(") != "" {
			if args, err = p.args(); err != nil {
				return nil, err
			}
		}
		v, err = filter(name, v, args)
	}
	return v, err
}

func (p *exprParser) args() ([]value, error) {
	p.pos++ // (
	var out []value
	for p.peek(")") == "" {
		v, err := p.concat()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.peek(",") == "" {
			break
		}
		p.pos++
	}
	if p.peek(")") == "" {
		return nil, errors.New("a ( is not closed")
	}
	p.pos++
	return out, nil
}

func (p *exprParser) primary() (value, error) {
	if p.pos >= len(p.toks) {
		return nil, errors.New("the expression ends early")
	}
	t := p.toks[p.pos]
	p.pos++
	switch {
	case t.kind == 'n':
		return parseNumber(t.text)
	case t.kind == 's':
		return t.text, nil
	case t.kind == 'i':
		switch t.text {
		case "true", "True", "false", "False", "none", "None", "and", "or", "not", "in", "is", "if", "else":
			return nil, fmt.Errorf("%q: only arithmetic on numbers and strings is supported", t.text)
		}
		v, ok := p.vars[t.text]
		if !ok {
			return nil, &undefinedError{name: t.text}
		}
		if v == nil {
			return nil, fmt.Errorf("variable %s is not a number or a string", t.text)
		}
		return v, nil
	case t.text == "(":
		v, err := p.concat()
		if err != nil {
			return nil, err
		}
		if p.peek(")") == "" {
			return nil, errors.New("a ( is not closed")
		}
		p.pos++
		return v, nil
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

// undefinedError is a reference to a variable that is not defined.
type undefinedError struct{ name string }

func (e *undefinedError) Error() string { return "no variable " + e.name + " under variables:" }

func parseNumber(s string) (value, error) {
	if i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// arith applies a binary operator with Python's semantics: int op int is an
// int (checked for overflow), / is true division, // and % floor.
func arith(op string, a, b value) (value, error) {
	if op == "~" {
		s := fmt.Sprint(show(a), show(b))
		if len(s) > maxExprString {
			return nil, fmt.Errorf("a string of more than %d bytes", maxExprString)
		}
		return s, nil
	}
	if sa, ok := a.(string); ok {
		return stringArith(op, sa, b)
	}
	if _, ok := b.(string); ok {
		if n, isInt := a.(int64); isInt && op == "*" {
			return stringArith(op, b.(string), n)
		}
		return nil, fmt.Errorf("cannot apply %s to a number and a string (use | int or | float)", op)
	}
	ia, aInt := a.(int64)
	ib, bInt := b.(int64)
	if aInt && bInt {
		if v, ok, err := intArith(op, ia, ib); ok || err != nil {
			return v, err
		}
	}
	return floatArith(op, toFloat(a), toFloat(b))
}

func intArith(op string, a, b int64) (value, bool, error) {
	switch op {
	case "+":
		if s := a + b; (s > a) == (b > 0) {
			return s, true, nil
		}
	case "-":
		if s := a - b; (s < a) == (b > 0) {
			return s, true, nil
		}
	case "*":
		if a == 0 || b == 0 {
			return int64(0), true, nil
		}
		if s := a * b; s/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64) {
			return s, true, nil
		}
	case "//", "%":
		if b == 0 {
			return nil, false, errors.New("division by zero")
		}
		q, r := a/b, a%b
		if r != 0 && (r < 0) != (b < 0) {
			q, r = q-1, r+b
		}
		if op == "%" {
			return r, true, nil
		}
		return q, true, nil
	case "**":
		if b < 0 {
			return nil, false, nil // a float, as in Python
		}
		if b > maxExponent {
			return nil, false, fmt.Errorf("an exponent over %d", maxExponent)
		}
		r := int64(1)
		for range b {
			if v, ok, _ := intArith("*", r, a); ok {
				r = v.(int64)
				continue
			}
			return nil, false, nil // overflows: computed as a float
		}
		return r, true, nil
	default:
		return nil, false, nil
	}
	return nil, false, nil // overflow: computed as a float
}

func floatArith(op string, a, b float64) (value, error) {
	var r float64
	switch op {
	case "+":
		r = a + b
	case "-":
		r = a - b
	case "*":
		r = a * b
	case "/", "//", "%":
		if b == 0 {
			return nil, errors.New("division by zero")
		}
		r = a / b
		if op == "//" {
			r = math.Floor(r)
		} else if op == "%" {
			r = a - math.Floor(a/b)*b
		}
	case "**":
		r = math.Pow(a, b)
	}
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return nil, fmt.Errorf("%g %s %g is not a finite number", a, op, b)
	}
	return r, nil
}

func stringArith(op, s string, b value) (value, error) {
	switch n, ok := b.(int64); {
	case op == "+":
		t, ok := b.(string)
		if !ok {
			return nil, errors.New("cannot add a number to a string (use | string, or ~)")
		}
		return arith("~", s, t)
	case op == "*" && ok:
		if n <= 0 {
			return "", nil
		}
		if n > maxExprString || len(s)*int(n) > maxExprString {
			return nil, fmt.Errorf("a string of more than %d bytes", maxExprString)
		}
		return strings.Repeat(s, int(n)), nil
	}
	return nil, fmt.Errorf("cannot apply %s to a string (use | int or | float)", op)
}

func toFloat(v value) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}

// filter applies a Jinja filter.
func filter(name string, v value, args []value) (value, error) {
	switch name {
	case "int":
		switch x := v.(type) {
		case float64:
			if math.Abs(x) >= 1<<63 {
				return nil, fmt.Errorf("%g is too large for | int", x)
			}
			return int64(x), nil
		case string:
			n, err := parseNumber(strings.TrimSpace(x))
			if err != nil {
				return int64(0), nil // Jinja's int of a non-number is 0
			}
			return filter("int", n, nil)
		}
		return v, nil
	case "float":
		if s, ok := v.(string); ok {
			n, err := parseNumber(strings.TrimSpace(s))
			if err != nil {
				return 0.0, nil
			}
			v = n
		}
		return toFloat(v), nil
	case "abs":
		switch x := v.(type) {
		case int64:
			if x == math.MinInt64 {
				return nil, errors.New("| abs overflows")
			}
			return max(x, -x), nil
		case float64:
			return math.Abs(x), nil
		}
	case "round":
		prec := int64(0)
		if len(args) > 0 {
			p, ok := args[0].(int64)
			if !ok || p < 0 || p > 15 {
				return nil, errors.New("round takes a precision from 0 to 15")
			}
			prec = p
		}
		if _, isString := v.(string); !isString {
			scale := math.Pow(10, float64(prec))
			return math.RoundToEven(toFloat(v)*scale) / scale, nil
		}
	case "string":
		return show(v), nil
	default:
		return nil, fmt.Errorf("filter %q is not supported: use int, float, round, abs or string", name)
	}
	return nil, fmt.Errorf("| %s does not apply to a string", name)
}

// show is a value as Jinja prints it: floats always with a fraction or an
// exponent ("3.0"), as Python does.
func show(v value) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return v.(string)
}
