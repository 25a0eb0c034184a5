package spec

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// match reads a match block (suite, agent or case): its ignore paths and
// normalize rules, in file order. The schema has checked the shapes;
// paths and regular expressions are checked here, at their positions.
func (x *decoder) match(n *yaml.Node, val any) []reqmatch.Rule {
	var out []reqmatch.Rule
	for _, p := range yamlpos.Pairs(n, val) {
		switch p.Key() {
		case "ignore":
			for _, it := range yamlpos.Items(p.V, p.Val) {
				s, ok := it.Val.(string)
				if !ok || s == "" {
					continue // reported by the schema
				}
				if _, err := reqmatch.ParsePath(s); err != nil {
					x.pathError(it.N, s, err)
					continue
				}
				out = append(out, reqmatch.Rule{Ignore: s})
			}
		case "normalize":
			for _, it := range yamlpos.Items(p.V, p.Val) {
				if r, ok := x.normalizeRule(it); ok {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// pathError reports a JSON path that does not parse at its column.
func (x *decoder) pathError(n *yaml.Node, s string, err error) {
	var pe *reqmatch.PathError
	if !errors.As(err, &pe) {
		x.errorf(n, "invalid JSON path %q: %v", s, err)
		return
	}
	at := *yamlpos.Deref(n)
	if at.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		at.Column++
	}
	if at.Line == yamlpos.Deref(n).Line && at.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		at.Column += pe.Col - 1
	}
	x.errorf(&at, "invalid JSON path %q: %s", s, pe.Msg)
}

func (x *decoder) normalizeRule(it yamlpos.Item) (reqmatch.Rule, bool) {
	n := yamlpos.Deref(it.N)
	if n == nil || n.Kind != yaml.MappingNode {
		return reqmatch.Rule{}, false // reported by the schema
	}
	m, _ := it.Val.(map[string]any)
	r := reqmatch.Rule{Preset: str(m["preset"]), Regex: str(m["regex"]), Replace: str(m["replace"])}
	_, regexNode := yamlpos.Lookup(n, "regex")
	replaceKey, _ := yamlpos.Lookup(n, "replace")
	switch {
	case r.Preset != "" && r.Regex != "":
		pk, _ := yamlpos.Lookup(n, "regex")
		x.errorf(pk, "a normalize rule has either preset or regex, not both: write each as its own \"- \" item")
		return r, false
	case r.Preset == "" && r.Regex == "":
		if _, v := yamlpos.Lookup(n, "preset"); v != nil {
			return r, false // an unknown preset, reported by the schema
		}
		if _, v := yamlpos.Lookup(n, "regex"); v != nil {
			return r, false
		}
		if hasUnknownKey(n, it.Val, "replace") {
			return r, false // reported by the schema, with a suggestion
		}
		x.errorf(n, "a normalize rule needs preset (%s) or regex", strings.Join(reqmatch.Presets(), ", "))
		return r, false
	case r.Preset != "" && replaceKey != nil:
		x.errorf(replaceKey, "replace goes with regex; preset %s always writes its own placeholder", r.Preset)
		return r, false
	}
	if r.Regex != "" && x.regex(regexNode, r.Regex) == nil {
		return r, false
	}
	return r, true
}

// fileCheck reads a file check: the path (relative, inside the
// workspace), then exists or absent alone, or any of the content checks.
func (x *decoder) fileCheck(c *Check, k, v *yaml.Node, val any) {
	m, _ := val.(map[string]any)
	if m == nil {
		return // reported by the schema
	}
	c.File = str(m["path"])
	if _, pn := yamlpos.Lookup(v, "path"); pn != nil && c.File != "" {
		// The same on every OS: '\' separates as '/' does (safeio.Confine),
		// and a drive letter is refused on Linux too.
		p := strings.ReplaceAll(c.File, `\`, "/")
		drive := len(p) >= 2 && p[1] == ':' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z'
		if strings.HasPrefix(p, "/") || filepath.IsAbs(c.File) || drive || slices.Contains(strings.Split(p, "/"), "..") {
			x.errorf(pn, "file path %q must be relative to the workspace and stay inside it (no leading / or \\, no drive letter, no ..)", c.File)
		}
	}
	c.Exists, _ = m["exists"].(bool)
	c.Absent, _ = m["absent"].(bool)
	var content []string
	for _, p := range yamlpos.Pairs(v, val) {
		switch key := p.Key(); key {
		case "contains":
			c.Contains = strPtr(p.Val)
			content = append(content, key)
		case "regex":
			if s, ok := p.Val.(string); ok {
				c.Regex = x.regex(p.V, s)
			}
			content = append(content, key)
		case "equals":
			c.JSONEquals, c.HasEquals = p.Val, true
			content = append(content, key)
		case "sha256":
			s := strings.ToLower(str(p.Val))
			if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
				x.errorf(p.V, "sha256 must be 64 hex digits (the output of sha256sum), not %s", yamlpos.Describe(p.Val))
			}
			c.SHA256 = s
			content = append(content, key)
		case "json_path":
			c.JSONPath = str(p.Val)
			if _, err := reqmatch.ParsePath(c.JSONPath); err != nil {
				x.pathError(p.V, c.JSONPath, err)
			} else if strings.Contains(c.JSONPath, "*") {
				x.errorf(p.V, "json_path %q of a file check names one value: no * steps", c.JSONPath)
			}
			content = append(content, key)
		}
	}
	switch {
	case c.Exists && c.Absent:
		x.errorf(k, "a file check takes exists or absent, not both")
	case (c.Exists || c.Absent) && len(content) > 0:
		x.errorf(k, "%s already says the file exists; drop exists, or give %s alone", strings.Join(content, ", "), map[bool]string{true: "absent", false: "exists"}[c.Absent])
	case !c.Exists && !c.Absent && len(content) == 0 && !hasUnknownKey(v, val, "path", "exists", "absent"):
		x.errorf(k, "a file check needs one of exists, absent, contains, regex, equals, sha256 or json_path")
	}
	if c.HasEquals && c.JSONPath == "" {
		if s, ok := c.JSONEquals.(string); ok {
			c.Equals = &s
		} else {
			_, en := yamlpos.Lookup(v, "equals")
			x.errorf(en, "equals of a file check is the file's text (a string), unless json_path is given; it is %s", yamlpos.Describe(c.JSONEquals))
		}
	}
}

// DefaultCommandTimeout bounds a command check's run (seconds), unless
// its timeout_s says otherwise; MaxCommandTimeout is the most it may say.
const (
	DefaultCommandTimeout = 120
	MaxCommandTimeout     = 3600
)

// commandCheck reads a command check: a shell command line, or {run,
// exit_code, timeout_s, contains, regex}.
func (x *decoder) commandCheck(c *Check, v *yaml.Node, val any) {
	if s, ok := val.(string); ok {
		c.Run = s
		return
	}
	m, _ := val.(map[string]any)
	c.Run, c.RunTimeout, c.Contains = str(m["run"]), number(m["timeout_s"]), strPtr(m["contains"])
	for _, p := range yamlpos.Pairs(v, val) {
		switch p.Key() {
		case "exit_code":
			c.ExitCode, _ = x.integer(p.V, p.Val)
		case "regex":
			if s, ok := p.Val.(string); ok {
				c.Regex = x.regex(p.V, s)
			}
		}
	}
}

// checkWorkspace reports a suite workspace where no program runs.
func (x *decoder) checkWorkspace(s *Suite, command bool) {
	if s.Workspace != "" && !command {
		x.d.AddAt(yamlpos.Error, s.WorkspacePos, "%s", workspaceWhy)
	} else if s.Workspace != "" {
		x.confineWorkspace(s, s.Workspace, s.WorkspacePos)
	}
}

// confineWorkspace reports a workspace outside the project root, as the
// run refuses it (safeio.Confine, from the suite's directory), once per
// name in a suite.
func (x *decoder) confineWorkspace(s *Suite, name string, at yamlpos.Pos) {
	if x.workspaces == nil {
		x.workspaces = map[string]error{}
	}
	err, seen := x.workspaces[name]
	if !seen {
		_, err = safeio.Confine(s.ProjectRoot(), filepath.Dir(s.File), name)
		x.workspaces[name] = err
	}
	if err != nil {
		hint := ""
		if errors.Is(err, safeio.ErrOutside) {
			hint = "; paths in files stay inside the project root (give --root DIR to widen it)"
		}
		x.d.AddAt(yamlpos.Error, at, "workspace %s%s", safeio.Describe(name, err), hint)
	}
}

const workspaceWhy = "workspace is for suites whose agent is a program (agent.command): it becomes the program's working directory"

// checkCaseWorkspace reports a case workspace where no program runs, and
// file checks of a case that has no workspace.
func (x *decoder) checkCaseWorkspace(s *Suite, c *Case, command bool) {
	if c.Workspace != "" && !command {
		x.d.AddAt(yamlpos.Error, c.WorkspacePos, "%s", workspaceWhy)
	} else if c.Workspace != "" {
		x.confineWorkspace(s, c.Workspace, c.WorkspacePos)
	}
	ws, _ := s.WorkspaceOf(c)
	for _, ch := range c.Expect {
		if ch.Kind == CheckFile && ws == "" {
			x.d.AddAt(yamlpos.Error, ch.Pos, "a file check needs a workspace: give workspace: DIR (a template directory, relative to the suite) on the suite or the case")
		}
		if ch.Kind == CheckCommand && !command {
			x.d.AddAt(yamlpos.Error, ch.Pos, "a command check runs after an agent program (agent.command or agent.cli), in its workspace; the built-in loop has none")
		}
	}
}

// hasUnknownKey says whether mapping n has a key other than those known
// (the schema reports it, with a suggestion).
func hasUnknownKey(n *yaml.Node, val any, known ...string) bool {
	return slices.ContainsFunc(yamlpos.Pairs(n, val), func(p yamlpos.KV) bool { return !slices.Contains(known, p.Key()) })
}
