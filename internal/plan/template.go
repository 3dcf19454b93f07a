package plan

import (
	"fmt"

	"github.com/aiperf-go/aiperf/internal/payload"
)

// checkTemplate checks --extra-inputs payload_template and response_field:
// required (the template) and parsed for the template endpoint, refused
// elsewhere (they would be sent as body fields).
func (v *validator) checkTemplate(p *Profile) {
	m := p.Extras()
	tmpl, hasTmpl := m[TemplateKey]
	field, hasField := m[ResponseField]
	switch p.EndpointType {
	case EndpointTemplate:
		s, ok := tmpl.(string)
		switch {
		case !hasTmpl:
			v.add("extra_inputs", "needs payload_template for --endpoint-type template, e.g. "+
				`--extra-inputs 'payload_template:{"text": {{ text|tojson }}}'`)
		case !ok:
			v.add("extra_inputs", "payload_template must be a string: a template, a file name or nv-embedqa")
		default:
			if _, err := payload.Load(s); err != nil {
				v.add("extra_inputs", "payload_template "+err.Error())
			}
		}
	case EndpointRaw:
		if hasTmpl {
			v.add("extra_inputs", "payload_template is read by --endpoint-type template, not raw (raw sends each payload as it is)")
		}
	default:
		if hasTmpl || hasField {
			v.add("extra_inputs", fmt.Sprintf("payload_template and response_field are read by --endpoint-type template (or raw), not %s: remove them", p.EndpointType))
		}
		return
	}
	if hasField {
		s, ok := field.(string)
		if !ok {
			v.add("extra_inputs", "response_field must be a string path such as data[0].embedding")
		} else if _, err := payload.ParseField(s); err != nil {
			v.add("extra_inputs", "response_field "+err.Error())
		}
	}
}

// Template is the parsed payload_template and response_field of a template
// or raw endpoint (nil when not set); Check has validated them.
func (p *Profile) Template() (*payload.Template, *payload.Field) {
	m := p.Extras()
	var t *payload.Template
	var f *payload.Field
	if s, ok := m[TemplateKey].(string); ok && p.EndpointType == EndpointTemplate {
		t, _ = payload.Load(s)
	}
	if s, ok := m[ResponseField].(string); ok && (p.EndpointType == EndpointTemplate || p.EndpointType == EndpointRaw) {
		f, _ = payload.ParseField(s)
	}
	return t, f
}
