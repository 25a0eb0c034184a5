package mock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// A rule's elicit or sample (spec.Ask): during each call it answers, the
// request goes to the call's MCP client through the context's tool.Asker,
// and the outcome is made from its answer ({{elicit.…}}, {{sample.…}}).

// ask is a rule's elicit or sample, compiled.
type ask struct {
	kind     spec.AskKind
	method   string
	params   []byte // the request's params, JSON
	schema   *jschema.Schema
	declined *spec.Outcome
}

func compileAsk(a *spec.Ask) *ask {
	if a == nil {
		return nil
	}
	c := &ask{kind: a.Kind, schema: a.Compiled, declined: a.Declined}
	var params map[string]any
	if a.Kind == spec.AskElicit {
		c.method = "elicitation/create"
		schema := a.Schema
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		params = map[string]any{"mode": "form", "message": a.Message, "requestedSchema": schema}
	} else {
		c.method = "sampling/createMessage"
		msgs := make([]any, len(a.Messages))
		for i, m := range a.Messages {
			msgs[i] = map[string]any{"role": m.Role, "content": map[string]any{"type": "text", "text": m.Text}}
		}
		params = map[string]any{"messages": msgs, "maxTokens": a.MaxTokens}
		if a.SystemPrompt != "" {
			params["systemPrompt"] = a.SystemPrompt
		}
	}
	c.params = []byte(value.Canonical(params))
	return c
}

// askClient sends the rule's request to the call's client and makes the
// call's answer from the client's: res (the rule's outcome o, picked)
// with the answer's values in its placeholders, and the exchange in
// res.Asked. A request not answered (no client, a client without the
// capability, no answer within the rule's timeout_s, an answer that is
// not one) makes an error result saying why.
func (r *rule) askClient(ctx context.Context, o outcome, res tool.Result) tool.Result {
	a := r.ask
	res.Asked = &tool.Asked{Method: a.method, Request: a.params}
	answer, err := r.send(ctx)
	var vars map[string]any
	if err == nil {
		answer, vars, err = a.read(answer)
	}
	if err != nil {
		res.Asked.Error = err.Error()
		res.Outcome, res.IsError, res.Blocks = tool.Error, true, nil
		res.Content = fmt.Sprintf("dryfire: the rule at %s asks the MCP client (%s) and got no answer: %v", r.where, a.method, err)
		return res
	}
	res.Asked.Answer = answer
	src := o.src
	if a.declined != nil && vars["elicit.action"] != "accept" {
		src = a.declined
	}
	switch src.Kind {
	case spec.Return:
		res.Content = value.Render(spec.FillAsk(src.Value, vars, true))
	case spec.Fail:
		res.Content = spec.FillAskText(src.Message, vars)
	case spec.Content:
		blocks, _ := spec.FillAsk(src.Blocks, vars, false).([]any)
		res.Content, res.Blocks = RenderContent(blocks), []byte(value.Canonical(blocks))
	}
	res.Outcome, res.IsError = tool.Outcome(src.Kind), src.Kind == spec.Fail
	return res
}

// send sends the rule's request through the context's asker, waiting at
// most the rule's timeout_s for the answer.
func (r *rule) send(ctx context.Context) ([]byte, error) {
	asker := tool.AskerFrom(ctx)
	if asker == nil {
		return nil, errors.New("this call did not come over MCP (the built-in loop, POST /tools/NAME), so there is no client to ask")
	}
	timeout := fmt.Errorf("no answer within %s (the rule's timeout_s)", r.timeout)
	ctx, cancel := context.WithTimeoutCause(ctx, r.timeout, timeout)
	defer cancel()
	answer, err := asker.Ask(ctx, &tool.Ask{Method: r.ask.method, Params: r.ask.params})
	if err != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); errors.Is(cause, timeout) {
			return nil, cause
		}
		return nil, fmt.Errorf("the call ended before the client answered: %w", context.Cause(ctx))
	}
	return answer, err
}

// read checks the client's answer and returns it without _meta, in
// canonical JSON, with the values of its placeholders: an elicitation's
// action must be accept, decline or cancel, and content it accepts with
// must match the requested schema; a sampling answer must have a role
// and content.
func (a *ask) read(answer []byte) ([]byte, map[string]any, error) {
	v, err := value.Parse(answer)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, nil, fmt.Errorf("the answer is not a JSON object: %.200q", answer)
	}
	delete(m, "_meta")
	if a.kind == spec.AskElicit {
		action, _ := m["action"].(string)
		switch action {
		case "accept":
			if a.schema != nil {
				content, _ := m["content"].(map[string]any)
				if content == nil {
					content = map[string]any{}
				}
				if leaves := a.schema.Validate(content); len(leaves) > 0 {
					return nil, nil, fmt.Errorf("the accepted content %s does not match the elicit schema: %s", value.Canonical(content), describeLeaves(leaves))
				}
			}
		case "decline", "cancel":
		default:
			return nil, nil, fmt.Errorf("the answer's action is %s, not accept, decline or cancel", value.Canonical(m["action"]))
		}
	} else if _, ok := m["role"].(string); !ok || m["content"] == nil {
		return nil, nil, fmt.Errorf("the answer %s has no role or content", value.Canonical(m))
	}
	return []byte(value.Canonical(m)), spec.AskVars(a.kind, m), nil
}

// describeLeaves is a schema's failures in one line.
func describeLeaves(leaves []jschema.Leaf) string {
	parts := make([]string, len(leaves))
	for i, l := range leaves {
		parts[i] = jschema.Pointer(l.Path) + ": " + l.Message
	}
	return strings.Join(parts, "; ")
}
