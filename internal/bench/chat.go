package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/aiperf-go/aiperf/internal/chattemplate"
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/jinja"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// chatTemplate is the template that counts the run's chat ISL
// (--apply-chat-template), loaded from the tokenizer's tokenizer_config.json
// and checked on sample conversations before any traffic (said on log): a
// template that does not render them, or goes over its budget doing so, is
// the user's error; when ctx ends the check stops with ctx's error. It is
// nil, with a note saying why, when the flag is off, when the endpoint sends
// no chat messages or when the tokenizer has no chat template: ISL is then
// the bare prompt's count, as AIPerf falls back.
func chatTemplate(ctx context.Context, p plan.Profile, tok tokenizer.Tokenizer, log io.Writer) (*chattemplate.Template, string, error) {
	if !p.ApplyChatTemplate {
		return nil, "", nil
	}
	const flag = "--apply-chat-template"
	sample, err := sampleChat(p)
	if err != nil {
		return nil, "", fmt.Errorf("%s: build a sample %s request: %w", flag, p.EndpointType, err)
	}
	if sample == nil {
		return nil, fmt.Sprintf("%s: --endpoint-type %s sends no chat messages: its ISL is the bare prompt's count", flag, p.EndpointType), nil
	}
	file, err := tokenizer.Locate(p.Tokenizer, p.TokenizerRevision)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", flag, err)
	}
	if file == "" {
		return nil, fmt.Sprintf("%s: the built-in %s encoding has no chat template: ISL is the bare prompt's count "+
			"(pass --tokenizer with the directory of the model's tokenizer.json and tokenizer_config.json)", flag, tok.Name()), nil
	}
	t, err := chattemplate.Load(filepath.Dir(file))
	if errors.Is(err, chattemplate.ErrNoTemplate) {
		return nil, fmt.Sprintf("%s: tokenizer %s: %v: ISL is the bare prompt's count", flag, tok.Name(), err), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: tokenizer %s: %w", flag, tok.Name(), err)
	}
	if p.ChatTemplateMaxSteps != nil {
		t = t.WithSteps(int64(*p.ChatTemplateMaxSteps))
	}
	fmt.Fprintf(log, "chat template: rendering two sample conversations with %s\n", t.File())
	for _, msgs := range [][]chattemplate.Message{sample, {sample[0], {Role: "assistant", Content: "Paris."}, sample[0]}} {
		if _, err := t.Render(ctx, msgs); err != nil {
			if ctx.Err() != nil {
				return nil, "", fmt.Errorf("%s: check the chat template: %w", flag, err)
			}
			var le *jinja.LimitError
			if errors.As(err, &le) && le.What == "steps" {
				err = fmt.Errorf("%w; --chat-template-max-steps raises the budget", err)
			}
			return nil, "", fmt.Errorf("%s: the chat template of tokenizer %s does not render a sample conversation: %w", flag, tok.Name(), err)
		}
	}
	return t, "", nil
}

// sampleChat is the conversation of a sample request of the run's endpoint
// type (nil when its body carries no chat messages).
func sampleChat(p plan.Profile) ([]chattemplate.Message, error) {
	tmpl, field := p.Template()
	body, err := endpoint.Body(endpoint.Request{EndpointType: p.EndpointType, Model: p.Model[0], Prompt: "What is the capital of France?",
		Inputs: []string{"What is the capital of France?"}, Query: "capital of France", Passages: []string{"Paris"},
		Template: tmpl, ResponseField: field, Extra: p.BodyExtras()})
	if err != nil {
		return nil, err
	}
	chat, ok, err := chattemplate.Messages(body)
	if err != nil || !ok || len(chat.Messages) == 0 {
		return nil, err
	}
	return chat.Messages, nil
}

// templated counts r's ISL through the chat template: the conversation
// its request sent, rendered with the generation prompt, plus its tool
// texts, as AIPerf counts. It reports false, leaving the bare count, for a
// request whose body carries no conversation or whose conversation the
// template does not render (roles that do not alternate after a failed
// turn, say).
func (f *finisher) templated(r *metrics.Record, req *endpoint.Request) bool {
	body := req.Body
	if body == nil {
		var err error
		if body, err = endpoint.Body(*req); err != nil {
			return false // the request failed on it
		}
	}
	chat, ok, err := chattemplate.Messages(body)
	if err == nil && !ok {
		return false
	}
	var text string
	if err == nil { // bounded by the template's budget, off the requests' path
		text, err = f.chat.Render(context.Background(), chat.Messages)
	}
	if err != nil {
		if st := &f.state; st.bare == 0 {
			st.bareErr = err
		}
		f.state.bare++
		return false
	}
	r.InputTokens = f.tok.Count(text)
	if len(chat.ToolTexts) > 0 {
		r.InputTokens += f.tok.Count(strings.Join(chat.ToolTexts, " "))
	}
	return true
}

// sizeForTemplate shortens synthetic prompts by the chat template's share
// (none without a template, or for a dataset read from a file), and says
// by how much.
func (c *cell) sizeForTemplate(ctx context.Context, o *dataset.Options, chat *chattemplate.Template) {
	if chat == nil || c.p.InputFile != "" || c.p.PublicDataset != "" {
		return
	}
	o.Template = templateOverhead(ctx, chat, c.tok)
	fmt.Fprintf(c.log, "chat template: %d tokens on a request's first turn, %d on each later one: synthetic prompts are that much shorter, "+
		"so that the model reads --isl tokens a turn\n", o.Template.First, o.Template.Later)
}

// overheadSamples are the texts the chat template's overhead is measured
// on: short, of different lengths and topics, as AIPerf's probe.
var overheadSamples = []string{
	"What is the capital of France?",
	"Summarize the plot of a short story about a lighthouse keeper who finds a message in a bottle.",
	"List three prime numbers.",
}

// templateOverhead measures what the template adds to a synthetic turn, as
// AIPerf's composer does before it sizes prompts: for each sample S, one
// message [user S] and three [user S, assistant S, user S] are rendered and
// counted; the difference, less the samples' own tokens, is two messages'
// wrapping, and the rest of the first is the request's fixed cost. The
// samples' values are averaged and rounded; a negative one gives no
// compensation at all, as in AIPerf.
func templateOverhead(ctx context.Context, t *chattemplate.Template, tok tokenizer.Tokenizer) dataset.TemplateOverhead {
	var fixed, wrap float64
	for _, s := range overheadSamples {
		user, asst := chattemplate.Message{Role: "user", Content: s}, chattemplate.Message{Role: "assistant", Content: s}
		one, err1 := t.Render(ctx, []chattemplate.Message{user})
		three, err3 := t.Render(ctx, []chattemplate.Message{user, asst, user})
		if err1 != nil || err3 != nil {
			return dataset.TemplateOverhead{}
		}
		bare := float64(tok.Count(s))
		w := (float64(tok.Count(three)) - float64(tok.Count(one)) - 2*bare) / 2
		f := float64(tok.Count(one)) - bare - w
		if w < 0 || f < 0 {
			return dataset.TemplateOverhead{}
		}
		fixed, wrap = fixed+f, wrap+w
	}
	n := float64(len(overheadSamples))
	f, w := int(math.Round(fixed/n)), int(math.Round(wrap/n))
	return dataset.TemplateOverhead{First: f + w, Later: w}
}
