package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Names maps the names a model is shown a suite's tools by to the suite's
// own: frameworks decorate the tools of an MCP server before the model
// sees them, and the suite's scripts and checks say the tool's name.
//
//	mcp__SERVER__NAME           Claude Code
//	SERVER__NAME                Codex (a Responses namespace), Gemini CLI
//	…dryfire…_NAME (or -, ., :) Mastra's server prefix, LangChain's MCP
//	                            adapters' tool_name_prefix, with a server
//	                            name that holds "dryfire"
//	mcp_…_mcp_NAME              crewai (the MCP server's URL, …/mcp, as a name;
//	                            exactly, cut at 64 characters with a hash,
//	                            for the servers given to Server)
//	an alias                    tools.NAME.aliases, for any other
//
// A name that is a suite tool's is that tool, whatever it looks like.
type Names struct {
	tools map[string]bool
	alias map[string]string // alias → the suite's name
	// exact are the names crewai gives the suite's tools of the servers
	// Server names (a long one is cut with a hash: no suffix tells it).
	exact map[string]string
}

// Server adds the names crewai gives the suite's tools when it reaches
// them at the MCP server url (its server name from the URL, then the
// tool's, made a function name of at most 64 characters).
func (n *Names) Server(url string) {
	if n.exact == nil {
		n.exact = map[string]string{}
	}
	server := crewaiServer(url)
	for t := range n.tools {
		n.exact[crewaiName(server+"_"+t)] = t
	}
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
	if t, ok := n.exact[name]; ok {
		return t, true
	}
	u := Undecorated(name)
	if i := slices.IndexFunc(u, func(s string) bool { return n.tools[s] }); i >= 0 {
		return u[i], true
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
		if t, ok := n.exact[name]; ok {
			return t == tool
		}
	}
	return slices.Contains(Undecorated(name), tool)
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

// crewaiServer is the server name crewai gives the MCP server at u: its
// host and port, then its path, as a name, "mcp_" first when it does not
// start with a letter (crewai's MCPToolResolver._extract_server_name).
func crewaiServer(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	name := strings.ReplaceAll(p.Host, ".", "_") // no user info: url.Parse keeps it in p.User
	if path := strings.Trim(strings.ReplaceAll(p.Path, "/", "_"), "_"); path != "" {
		name += "_" + path
	}
	if s := crewaiName(name); s == "" || s[0] < 'a' || s[0] > 'z' {
		name = "mcp_" + name
	}
	return name
}

var (
	camelUpperLower = regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`)
	camelLowerUpper = regexp.MustCompile(`([a-z])([A-Z])`)
	notAlnum        = regexp.MustCompile(`[^a-zA-Z0-9]+`)
)

// crewaiName is a name as crewai makes it a function name (its
// sanitize_tool_name, for ASCII names): camelCase split, lower case,
// every run of other characters than letters and digits one '_', none at
// either end; over 64 characters, cut to 55 and a '_' and the first 8
// hex digits of the SHA-256 of the whole.
func crewaiName(s string) string {
	s = camelUpperLower.ReplaceAllString(s, "${1}_${2}")
	s = camelLowerUpper.ReplaceAllString(s, "${1}_${2}")
	s = strings.ToLower(s)
	s = strings.NewReplacer("'", "", `"`, "").Replace(s)
	s = strings.Trim(notAlnum.ReplaceAllString(s, "_"), "_")
	if len(s) > 64 {
		sum := sha256.Sum256([]byte(s))
		s = strings.TrimRight(s[:64-9], "_") + "_" + hex.EncodeToString(sum[:4])
	}
	return s
}
