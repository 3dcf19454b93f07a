// Package payload implements AIPerf's template endpoint: a request body
// written as a template (--extra-inputs payload_template:…, a subset of
// Jinja2: {{ name }} with the filters tojson, lower, upper and string), and
// the response_field path (a subset of JMESPath: fields and [n] indices)
// that picks the generated text out of each reply. A template is parsed,
// rendered once with sample values and checked to be JSON before any
// traffic, so a broken one is refused with exit 2.
package payload
