package toolserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The suite's resources and prompts (spec.Resource, spec.Prompt), served
// through go-sdk beside the tools in both protocol eras, with their
// completions. Every resources/read, prompts/get and completion/complete
// is recorded on the scope (MCPUses), answered or not.

// extras are a scope's resources and prompts (its suite's), and the
// record of the MCP requests that used them.
type extras struct {
	suite *spec.Suite
	mu    sync.Mutex
	uses  []tool.MCPUse
}

// options are the capabilities the suite's resources and prompts
// need, and the completion handler when any of them completes.
func (s *extras) options(caps *mcp.ServerCapabilities) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if len(s.suite.Resources) > 0 {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	if len(s.suite.Prompts) > 0 {
		caps.Prompts = &mcp.PromptCapabilities{}
	}
	if len(s.suite.Resources) == 0 && len(s.suite.Prompts) == 0 {
		return nil
	}
	caps.Completions = &mcp.CompletionCapabilities{}
	return s.complete
}

// add registers the suite's resources and prompts on server.
func (s *extras) add(server *mcp.Server) {
	for _, r := range s.suite.Resources {
		if r.URI != "" {
			server.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: resourceMIME(r, r.Content)},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return readResult(r, r.URI, r.Content, nil), nil
				})
			continue
		}
		t, err := uritemplate.New(r.Template)
		if err != nil {
			continue // the loader refused it
		}
		server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: r.Template, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				uri := req.Params.URI
				values := map[string]string{}
				if m := t.Match(uri); m != nil {
					for _, name := range t.Varnames() {
						values[name] = m.Get(name).String()
					}
				}
				for _, a := range r.Answers {
					if matches(a.When, values) {
						return readResult(r, uri, a.Content, values), nil
					}
				}
				if r.Content.Has {
					return readResult(r, uri, r.Content, values), nil
				}
				return nil, mcp.ResourceNotFoundError(uri)
			})
	}
	for _, p := range s.suite.Prompts {
		args := make([]*mcp.PromptArgument, len(p.Arguments))
		for i, a := range p.Arguments {
			args[i] = &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required}
		}
		server.AddPrompt(&mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: args},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				values := req.Params.Arguments
				for _, a := range p.Arguments {
					if _, ok := values[a.Name]; a.Required && !ok {
						return nil, fmt.Errorf("prompt %q needs its argument %q", p.Name, a.Name)
					}
				}
				res := &mcp.GetPromptResult{Description: p.Description, Messages: make([]*mcp.PromptMessage, len(p.Messages))}
				for i, m := range p.Messages {
					res.Messages[i] = &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: spec.Fill(m.Text, values)}}
				}
				return res, nil
			})
	}
}

// matches says whether every value of when is the read's.
func matches(when, values map[string]string) bool {
	for k, v := range when {
		if values[k] != v {
			return false
		}
	}
	return true
}

// resourceMIME is the mime type of content c of resource r: its own,
// else the resource's, else what its kind implies.
func resourceMIME(r *spec.Resource, c spec.ResourceContent) string {
	switch {
	case c.MIMEType != "" && (r.MIMEType == "" || c.MIMEType != "application/json"):
		return c.MIMEType
	case r.MIMEType != "":
		return r.MIMEType
	case c.IsBlob:
		return "application/octet-stream"
	}
	return "text/plain"
}

func readResult(r *spec.Resource, uri string, c spec.ResourceContent, values map[string]string) *mcp.ReadResourceResult {
	rc := &mcp.ResourceContents{URI: uri, MIMEType: resourceMIME(r, c)}
	if c.IsBlob {
		rc.Blob = c.Blob
	} else {
		rc.Text = spec.Fill(c.Text, values)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}
}

// complete answers completion/complete: the declared values of the
// prompt's argument or the template's variable that start with what the
// client typed, in file order.
func (s *extras) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var values []string
	if p.Ref != nil {
		switch p.Ref.Type {
		case "ref/prompt":
			for _, pr := range s.suite.Prompts {
				if pr.Name == p.Ref.Name {
					for _, a := range pr.Arguments {
						if a.Name == p.Argument.Name {
							values = a.Complete
						}
					}
				}
			}
		case "ref/resource":
			for _, r := range s.suite.Resources {
				if r.Template == p.Ref.URI {
					values = r.Complete[p.Argument.Name]
				}
			}
		}
	}
	out := []string{}
	for _, v := range values {
		if strings.HasPrefix(v, p.Argument.Value) {
			out = append(out, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
}

// record records an MCP request other than a tool call.
func (s *extras) record(method string, req mcp.Request, err error) {
	u := tool.MCPUse{Method: method}
	switch p := req.GetParams().(type) {
	case *mcp.ReadResourceParams:
		u.URI = p.URI
	case *mcp.GetPromptParams:
		u.Name = p.Name
		if len(p.Arguments) > 0 {
			u.Arguments = p.Arguments
		}
	case *mcp.CompleteParams:
		if p.Ref != nil {
			u.URI, u.Name = p.Ref.URI, p.Ref.Name
		}
		u.Arguments = map[string]string{p.Argument.Name: p.Argument.Value}
	}
	if err != nil {
		u.Error = err.Error()
	}
	s.mu.Lock()
	s.uses = append(s.uses, u)
	s.mu.Unlock()
}

// MCPUses returns the scope's resource reads, prompt gets and
// completions since the start or the last Reset, in the order they were
// answered.
func (s *Scope) MCPUses() []tool.MCPUse {
	x := &s.extras
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.uses)
}

// reset clears the record of MCP uses.
func (s *extras) reset() {
	s.mu.Lock()
	s.uses = nil
	s.mu.Unlock()
}
