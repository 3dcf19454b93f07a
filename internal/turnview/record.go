package turnview

// Limits on the small fields of a record: longer ones are cut (ids and
// names are short; a hostile export gets no more memory out of them).
const (
	idLimit   = 256 // conversation and correlation ids, the model
	roleLimit = 64  // a message's role, a content part's type
	maxRoles  = 32  // distinct roles counted in the legend; more are "other"
)

// fields is what the viewer reads of a record: its metadata and payload,
// as AIPerf's viewer flattens them.
type fields struct {
	conv, corr, parent, model string
	turn                      int64
	hasTurn                   bool
	depth, start              int64
	phase                     string
	cancelled, failed         bool
	maxTokens                 string
	messages                  int
	payload                   bool // the record has a payload object (a raw record)
}

// decoder reads records, calling message for each message of a payload
// with its role and, when bodies is set, its content's text.
type decoder struct {
	s       *scanner
	bodies  bool
	role    *text
	content *text
	message func(role, content *text)
	f       fields
	mct     scalar // max_completion_tokens, ahead of max_tokens
	mt      scalar
}

func newDecoder(s *scanner, contentCap int, bodies bool, message func(role, content *text)) *decoder {
	return &decoder{s: s, bodies: bodies, role: newText(roleLimit, bodies), content: newText(contentCap, bodies), message: message}
}

// record reads one record (a line's object).
func (d *decoder) record() error {
	d.f, d.mct, d.mt = fields{}, scalar{}, scalar{}
	err := d.s.object(func(key string) error {
		switch key {
		case "metadata":
			return d.ifObject(d.metadata)
		case "payload":
			c, err := d.s.peek()
			d.f.payload = err == nil && c == '{'
			return d.ifObject(d.payload)
		case "error":
			v, err := d.s.scalar(1)
			d.f.failed = v.truthy()
			return err
		}
		return d.s.value(nil)
	})
	switch {
	case d.mct.truthy():
		d.f.maxTokens = d.mct.text
	case d.mt.truthy():
		d.f.maxTokens = d.mt.text
	}
	return err
}

// ifObject reads an object's fields with fn, or skips a value of another
// kind (AIPerf's viewer reads such a record as having none).
func (d *decoder) ifObject(fn func(key string) error) error {
	if c, err := d.s.peek(); err != nil || c != '{' {
		if err != nil {
			return err
		}
		return d.s.value(nil)
	}
	return d.s.object(fn)
}

func (d *decoder) metadata(key string) error {
	var err error
	switch key {
	case "conversation_id":
		d.f.conv, err = d.id()
	case "x_correlation_id":
		d.f.corr, err = d.id()
	case "parent_correlation_id":
		d.f.parent, err = d.id()
	case "benchmark_phase":
		d.f.phase, err = d.id()
	case "turn_index":
		var v scalar
		v, err = d.s.scalar(1)
		d.f.turn, d.f.hasTurn = v.int()
	case "agent_depth":
		var v scalar
		v, err = d.s.scalar(1)
		d.f.depth, _ = v.int()
	case "request_start_ns":
		var v scalar
		v, err = d.s.scalar(1)
		d.f.start, _ = v.int()
	case "was_cancelled":
		var v scalar
		v, err = d.s.scalar(1)
		d.f.cancelled = v.truthy()
	default:
		err = d.s.value(nil)
	}
	return err
}

// id reads a string (or a number's text) cut at idLimit; "" for another
// kind of value.
func (d *decoder) id() (string, error) {
	v, err := d.s.scalar(idLimit)
	if v.kind != '"' && v.kind != '0' {
		return "", err
	}
	return v.text, err
}

func (d *decoder) payload(key string) error {
	var err error
	switch key {
	case "model":
		d.f.model, err = d.id()
	case "max_completion_tokens":
		d.mct, err = d.s.scalar(idLimit)
	case "max_tokens":
		d.mt, err = d.s.scalar(idLimit)
	case "messages":
		if c, perr := d.s.peek(); perr != nil || c != '[' {
			if perr != nil {
				return perr
			}
			return d.s.value(nil) // not a list: no messages, as AIPerf
		}
		err = d.s.array(d.chatMessage)
	default:
		err = d.s.value(nil)
	}
	return err
}

// chatMessage reads one message of the payload's list: an object with a
// role ("?" without one) and a content, or any other value, which is its
// own content, as AIPerf's viewer reads it.
func (d *decoder) chatMessage() error {
	d.role.reset()
	d.content.reset()
	d.f.messages++
	c, err := d.s.peek()
	if err != nil {
		return err
	}
	if c != '{' {
		d.role.writeString("?")
		if err := d.contentValue(); err != nil {
			return err
		}
		d.message(d.role, d.content)
		return nil
	}
	hasRole := false
	err = d.s.object(func(key string) error {
		switch key {
		case "role":
			hasRole = true
			if c, err := d.s.peek(); err != nil || c != '"' {
				if err != nil {
					return err
				}
				return d.s.value(d.role)
			}
			return d.s.str(d.role)
		case "content":
			return d.contentValue()
		}
		return d.s.value(nil)
	})
	if err != nil {
		return err
	}
	if !hasRole {
		d.role.writeString("?")
	}
	d.message(d.role, d.content)
	return nil
}

// contentValue reads a message's content into d.content (skipped without
// bodies): a string is itself, null is empty, a list of parts is each
// part's text (or <type> for a part without text, an image's) a line
// each, anything else its JSON text.
func (d *decoder) contentValue() error {
	if !d.bodies {
		return d.s.value(nil)
	}
	c, err := d.s.peek()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		return d.s.str(d.content)
	case 'n':
		return d.s.value(nil)
	case '[':
		n := 0
		return d.s.array(func() error {
			if n++; n > 1 {
				d.content.writeString("\n")
			}
			return d.part()
		})
	}
	return d.s.value(d.content)
}

// part reads one part of a content list.
func (d *decoder) part() error {
	c, err := d.s.peek()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		return d.s.str(d.content)
	case '{':
	default:
		return d.s.value(d.content)
	}
	before, kind := d.content.runes, "part"
	err = d.s.object(func(key string) error {
		switch key {
		case "text":
			c, err := d.s.peek()
			switch {
			case err != nil:
				return err
			case c == '"':
				return d.s.str(d.content)
			case c == 'n' || c == 'f':
				return d.s.value(nil)
			}
			return d.s.value(d.content)
		case "type":
			v, err := d.s.scalar(roleLimit)
			if v.kind == '"' {
				kind = v.text
			}
			return err
		}
		return d.s.value(nil)
	})
	if err == nil && d.content.runes == before {
		d.content.writeString("<" + kind + ">")
	}
	return err
}
