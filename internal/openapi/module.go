package openapi

import (
	"fmt"

	"go.starlark.net/syntax"
)

// checkModule parses a written behavior module and compares it with what
// was meant: the helpers, then one function per call, each of one
// statement returning its helper's call with ctx, args and the literal
// arguments meant. Text from the document that escaped its quoting would
// add a statement or change an argument, and fail here.
func checkModule(file string, data []byte, meant []call) error {
	f, err := (&syntax.FileOptions{}).Parse(file, data, syntax.RetainComments)
	if err != nil {
		return fmt.Errorf("the behavior module does not parse: %w", err)
	}
	helpers, err := (&syntax.FileOptions{}).Parse("helpers", moduleHelpers, 0)
	if err != nil {
		return fmt.Errorf("the helpers do not parse: %w", err)
	}
	nh := len(helpers.Stmts)
	if len(f.Stmts) != nh+len(meant) {
		return fmt.Errorf("the behavior module has %d top-level statements where %d were meant", len(f.Stmts), nh+len(meant))
	}
	for i, c := range meant {
		st := f.Stmts[nh+i]
		at := func(format string, args ...any) error {
			p, _ := st.Span()
			return fmt.Errorf("%s: %s", p, fmt.Sprintf(format, args...))
		}
		def, ok := st.(*syntax.DefStmt)
		if !ok || def.Name.Name != c.fn {
			return at("not the function %s meant", c.fn)
		}
		if len(def.Body) != 1 {
			return at("%s has %d statements where one was meant", c.fn, len(def.Body))
		}
		ret, ok := def.Body[0].(*syntax.ReturnStmt)
		if !ok {
			return at("%s does not return at once", c.fn)
		}
		ce, ok := ret.Result.(*syntax.CallExpr)
		if !ok {
			return at("%s does not return a call", c.fn)
		}
		if id, ok := ce.Fn.(*syntax.Ident); !ok || id.Name != c.helper {
			return at("%s does not call %s", c.fn, c.helper)
		}
		if len(ce.Args) != 2+len(c.args) {
			return at("%s calls %s with %d arguments where %d were meant", c.fn, c.helper, len(ce.Args), 2+len(c.args))
		}
		for j, a := range c.args {
			e := ce.Args[2+j]
			switch want := a.(type) {
			case string:
				lit, ok := e.(*syntax.Literal)
				if !ok || lit.Token != syntax.STRING || lit.Value != want {
					return at("%s's argument %d is not the string %q", c.fn, j+3, want)
				}
			case bool:
				id, ok := e.(*syntax.Ident)
				if !ok || id.Name != map[bool]string{true: "True", false: "False"}[want] {
					return at("%s's argument %d is not %v", c.fn, j+3, want)
				}
			}
		}
	}
	return nil
}
