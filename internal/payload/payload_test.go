package payload

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRenderFillsEveryVariable(t *testing.T) {
	tmpl, err := Load(`{"m": {{ model|tojson }}, "t": {{ text|tojson }}, "all": {{texts|tojson}}, "n": {{ max_tokens }},` +
		` "s": {{ stream|lower }}, "q": {{ query|tojson }}, "p": {{ passages|tojson }}, "r": "{{ role|upper }}"}`)
	require.NoError(t, err)
	b, err := tmpl.Render(Vars{Model: "m1", Texts: []string{"a\"b", "c"}, MaxTokens: 7, Stream: true, Role: "user",
		Query: "why", Passages: []string{"x"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"m":"m1","t":"a\"b","all":["a\"b","c"],"n":7,"s":true,"q":"why","p":["x"],"r":"USER"}`, string(b))

	b, err = tmpl.Render(Vars{Texts: []string{"a"}}) // no max tokens: None, as Jinja prints it
	require.Error(t, err, "None is not JSON")
	assert.Nil(t, b)
}

func TestLoadRefusesBrokenTemplates(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"model": {{ model|tojson }}}`, "never uses the prompt"},
		{`{"text": {% for t in texts %}{{ t }}{% endfor %}}`, "statement"},
		{`{"text": {{ text|tojson }`, "without its }}"},
		{`{"text": {{ prompt|tojson }}}`, "uses {{ prompt|tojson }}: the variables are"},
		{`{"text": {{ text|escape }}}`, `filter "escape"`},
		{`{"text": {{ text }}}`, "does not render a JSON object"},
		{`no-such-file.json`, "read the template file"},
	} {
		_, err := Load(tc.src)
		require.Error(t, err, tc.src)
		assert.Contains(t, err.Error(), tc.want, tc.src)
	}
}

func TestLoadNamedAndFileTemplates(t *testing.T) {
	tmpl, err := Load("nv-embedqa")
	require.NoError(t, err)
	b, err := tmpl.Render(Vars{Texts: []string{"a", "b"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"text":["a","b"]}`, string(b))

	path := filepath.Join(t.TempDir(), "body.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"prompt": {{ text|tojson }}, "max_new_tokens": {{ max_tokens|tojson }}}`), 0o644))
	tmpl, err = Load(path)
	require.NoError(t, err)
	b, err = tmpl.Render(Vars{Texts: []string{"hi"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"prompt":"hi","max_new_tokens":null}`, string(b))
}

func TestField(t *testing.T) {
	f, err := ParseField("data[0].embedding")
	require.NoError(t, err)
	v, err := Decode([]byte(`{"data":[{"embedding":[1,2]}]}`))
	require.NoError(t, err)
	got, ok := f.Find(v)
	assert.True(t, ok)
	assert.Len(t, got, 2)

	f, err = ParseField("choices[-1].text")
	require.NoError(t, err)
	v, _ = Decode([]byte(`{"choices":[{"text":"a"},{"text":"b"}]}`))
	got, ok = f.Find(v)
	assert.True(t, ok)
	assert.Equal(t, "b", got)
	_, ok = f.Find("not an object")
	assert.False(t, ok)

	for _, bad := range []string{"", "a..b", "a[x]", "a[0", "a[0]b", "a-b", "foo | bar"} {
		_, err := ParseField(bad)
		assert.Error(t, err, bad)
	}
}
