package tool

import "strings"

// Names maps the names a model is shown a suite's tools by to the suite's
// own: frameworks decorate the tools of an MCP server before the model
// sees them, and the suite's scripts and checks say the tool's name.
//
//	mcp__SERVER__NAME           Claude Code
//	SERVER__NAME                Codex (a Responses namespace), Gemini CLI
//	…dryfire…_NAME (or -, ., :) Mastra's server prefix, LangChain's MCP
//	                            adapters' tool_name_prefix, with a server
//	                            name that holds "dryfire"
//	mcp_…_mcp_NAME              crewai (the MCP server's URL, …/mcp, as a name)
//	an alias                    tools.NAME.aliases, for any other
//
// A name that is a suite tool's is that tool, whatever it looks like.
type Names struct {
	tools map[string]bool
	alias map[string]string // alias → the suite's name
}

// NewNames maps names to tools (the suite's), with aliases (alias → tool).
func NewNames(tools []string, aliases map[string]string) *Names {
	n := &Names{tools: make(map[string]bool, len(tools)), alias: aliases}
	for _, t := range tools {
		n.tools[t] = true
	}
	return n
}

// Suite is the suite's name of the tool a model calls name, and whether
// it is a suite tool at all (false: the agent's own, name as it is).
func (n *Names) Suite(name string) (string, bool) {
	if n == nil {
		return name, false
	}
	if n.tools[name] {
		return name, true
	}
	if t, ok := n.alias[name]; ok {
		return t, true
	}
	for _, inner := range Undecorated(name) {
		if n.tools[inner] {
			return inner, true
		}
	}
	return name, false
}

// Is says whether a model shown a tool as name calls the suite's tool
// (by its name, an alias, or a decoration of it).
func (n *Names) Is(name, tool string) bool {
	if name == tool {
		return true
	}
	if n != nil {
		if t, ok := n.alias[name]; ok {
			return t == tool
		}
	}
	for _, inner := range Undecorated(name) {
		if inner == tool {
			return true
		}
	}
	return false
}

// Undecorated are the names a decorated tool name may stand for (see
// Names), most likely first; none when it has no decoration.
func Undecorated(name string) []string {
	var out []string
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if _, inner, ok := strings.Cut(rest, "__"); ok && inner != "" {
			out = append(out, inner)
		}
	}
	if _, inner, ok := strings.Cut(name, "__"); ok && inner != "" {
		out = append(out, inner)
	}
	for i := 1; i < len(name)-1; i++ {
		if !strings.ContainsRune("_-.:", rune(name[i])) {
			continue
		}
		prefix, inner := name[:i], name[i+1:]
		if strings.Contains(strings.ToLower(prefix), "dryfire") || strings.HasPrefix(prefix, "mcp_") && strings.HasSuffix(prefix, "_mcp") {
			out = append(out, inner)
		}
	}
	return out
}
