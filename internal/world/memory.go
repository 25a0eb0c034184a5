package world

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Starlark has a step budget but no allocation hook: one step can double a
// string. The memory bound is kept by rewriting, before compiling, every
// operation that can allocate much in one step (the operators + * % | <<,
// their augmented forms, and the growing string, list and dict methods)
// into a call of a checking built-in, and by checking the converting
// built-ins (list, str, sorted...). Each charges the bytes its result
// will take, before allocating, to a budget per behavior call and per
// module load. Steps bound everything else a behavior allocates.

// DefaultMemoryMB is the default of limits.memory_mb.
const DefaultMemoryMB = 256

// memBudget is what one call (or one module load) may still allocate.
type memBudget struct {
	limit, used int64
	mb          int
}

const memKey = "memory"

func newMemBudget(mb int) *memBudget { return &memBudget{limit: int64(mb) << 20, mb: mb} }

// charge takes n bytes from the thread's budget.
func charge(t *starlark.Thread, n int64) error {
	b, _ := t.Local(memKey).(*memBudget)
	if b == nil || n <= 0 {
		return nil
	}
	b.used += n
	if b.used > b.limit || b.used < 0 {
		return fmt.Errorf("memory limit: this would allocate more than %d MiB (limits.memory_mb in the world file raises it)", b.mb)
	}
	return nil
}

// remaining is what the budget still allows (a cap for estimates).
func remaining(t *starlark.Thread) int64 {
	b, _ := t.Local(memKey).(*memBudget)
	if b == nil {
		return 1 << 40
	}
	return b.limit - b.used + 1
}

// Names of the checking built-ins the rewrite calls. A behavior cannot
// write them: they are not identifiers a module may define (the rewrite
// refuses a module that does).
const (
	opFn     = "__dryfire_op__"
	methodFn = "__dryfire_method__"
	attrFn   = "__dryfire_attr__"
)

var checkedOps = map[syntax.Token]string{
	syntax.PLUS: "+", syntax.STAR: "*", syntax.PERCENT: "%", syntax.PIPE: "|", syntax.LTLT: "<<",
	syntax.PLUS_EQ: "+=", syntax.STAR_EQ: "*=", syntax.PERCENT_EQ: "%=", syntax.PIPE_EQ: "|=", syntax.LTLT_EQ: "<<=",
}

var opTokens = map[string]syntax.Token{
	"+": syntax.PLUS, "*": syntax.STAR, "%": syntax.PERCENT, "|": syntax.PIPE, "<<": syntax.LTLT,
	"+=": syntax.PLUS, "*=": syntax.STAR, "%=": syntax.PERCENT, "|=": syntax.PIPE, "<<=": syntax.LTLT,
}

var checkedMethods = map[string]bool{
	"join": true, "replace": true, "format": true, "split": true, "rsplit": true, "splitlines": true,
	"elems": true, "codepoints": true, "elem_ords": true, "codepoint_ords": true,
	"extend": true, "update": true,
}

func strLit(pos syntax.Position, s string) *syntax.Literal {
	return &syntax.Literal{Token: syntax.STRING, TokenPos: pos, Raw: fmt.Sprintf("%q", s), Value: s}
}

func checkCall(pos syntax.Position, fn string, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: fn}, Lparen: pos, Args: args, Rparen: pos}
}

var (
	exprType  = reflect.TypeFor[syntax.Expr]()
	stmtType  = reflect.TypeFor[syntax.Stmt]()
	exprSlice = reflect.TypeFor[[]syntax.Expr]()
	stmtSlice = reflect.TypeFor[[]syntax.Stmt]()
)

// rewriteMemory rewrites a parsed module in place (see above).
func rewriteMemory(f *syntax.File) {
	for i, s := range f.Stmts {
		f.Stmts[i] = rewriteNode(reflect.ValueOf(s)).Interface().(syntax.Stmt)
	}
}

// rewriteNode rewrites the children of a node, then the node itself.
func rewriteNode(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return v
	}
	s := v.Elem()
	for i := range s.NumField() {
		fv := s.Field(i)
		if !fv.CanSet() {
			continue
		}
		switch t := fv.Type(); {
		case t == exprType || t == stmtType:
			if !fv.IsNil() {
				fv.Set(rewriteNode(fv))
			}
		case t == exprSlice || t == stmtSlice:
			for j := range fv.Len() {
				if e := fv.Index(j); !e.IsNil() {
					e.Set(rewriteNode(e))
				}
			}
		case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
			rewriteNode(fv)
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Pointer:
			for j := range fv.Len() {
				rewriteNode(fv.Index(j))
			}
		}
	}
	switch n := v.Interface().(type) {
	case *syntax.BinaryExpr:
		if op, ok := checkedOps[n.Op]; ok {
			return reflect.ValueOf(syntax.Expr(checkCall(n.OpPos, opFn, strLit(n.OpPos, op), n.X, n.Y)))
		}
	case *syntax.AssignStmt:
		if op, ok := checkedOps[n.Op]; ok && n.Op != syntax.EQ {
			if use := pureCopy(n.LHS); use != nil {
				n.RHS = checkCall(n.OpPos, opFn, strLit(n.OpPos, op), use, n.RHS)
				n.Op = syntax.EQ
			}
		}
	case *syntax.DotExpr:
		// A method taken as a value (f = s.replace) is checked when called.
		if checkedMethods[n.Name.Name] {
			return reflect.ValueOf(syntax.Expr(checkCall(n.NamePos, attrFn, n.X, strLit(n.NamePos, n.Name.Name))))
		}
	case *syntax.CallExpr:
		// x.m(...), its x.m already rewritten: one checking call.
		if c, ok := n.Fn.(*syntax.CallExpr); ok && len(c.Args) == 2 {
			if id, ok := c.Fn.(*syntax.Ident); ok && id.Name == attrFn {
				args := append([]syntax.Expr{c.Args[0], c.Args[1]}, n.Args...)
				return reflect.ValueOf(syntax.Expr(checkCall(n.Lparen, methodFn, args...)))
			}
		}
	}
	return v
}

// pureCopy is a fresh copy of an assignment target that is safe to
// evaluate twice (a name, or a name indexed by a name or a literal), or
// nil.
func pureCopy(e syntax.Expr) syntax.Expr {
	switch x := e.(type) {
	case *syntax.Ident:
		return &syntax.Ident{NamePos: x.NamePos, Name: x.Name}
	case *syntax.IndexExpr:
		base := pureCopy(x.X)
		if base == nil {
			return nil
		}
		switch k := x.Y.(type) {
		case *syntax.Ident:
			return &syntax.IndexExpr{X: base, Lbrack: x.Lbrack, Y: &syntax.Ident{NamePos: k.NamePos, Name: k.Name}, Rbrack: x.Rbrack}
		case *syntax.Literal:
			c := *k
			return &syntax.IndexExpr{X: base, Lbrack: x.Lbrack, Y: &c, Rbrack: x.Rbrack}
		}
	}
	return nil
}

// shallow is the bytes a value's own allocation takes (not its
// elements').
func shallow(v starlark.Value) int64 {
	switch x := v.(type) {
	case starlark.String:
		return int64(len(x)) + 16
	case starlark.Bytes:
		return int64(len(x)) + 16
	case starlark.Int:
		return int64(x.BigInt().BitLen()/8) + 16
	case *starlark.Dict:
		return int64(x.Len())*64 + 48
	case *starlark.Set:
		return int64(x.Len())*48 + 48
	case starlark.Sequence:
		return int64(x.Len())*16 + 24
	}
	return 16
}

// maxReprVisits bounds the elements reprSize visits: a value of shared
// lists nested 40 deep has 2^40 of them.
const maxReprVisits = 4_000_000

// reprSize estimates the length of str(v), stopping past limit (or past
// maxReprVisits elements, which then counts as past limit).
func reprSize(v starlark.Value, limit int64) int64 {
	var n int64
	visits := 0
	var walk func(v starlark.Value)
	walk = func(v starlark.Value) {
		if visits++; visits > maxReprVisits {
			n = limit + 1
		}
		if n > limit {
			return
		}
		switch x := v.(type) {
		case starlark.String:
			n += int64(len(x)) + 2
		case starlark.Bytes:
			n += int64(len(x))*4 + 3
		case starlark.Int:
			n += int64(x.BigInt().BitLen())*3/10 + 1
		case *starlark.Dict:
			n += 2
			for _, kv := range x.Items() {
				walk(kv[0])
				walk(kv[1])
				n += 4
			}
		case starlark.Indexable:
			n += 2
			for i := range x.Len() {
				walk(x.Index(i))
				n += 2
			}
		case *starlark.Set:
			n += 5
			iter := x.Iterate()
			var e starlark.Value
			for iter.Next(&e) && n <= limit {
				walk(e)
				n += 2
			}
			iter.Done()
		default:
			n += 24
		}
	}
	walk(v)
	return n
}

func intBits(v starlark.Value) (int64, bool) {
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, false
	}
	return int64(i.BigInt().BitLen()), true
}

func seqLen(v starlark.Value) (int64, bool) {
	switch x := v.(type) {
	case starlark.String:
		return int64(len(x)), true
	case starlark.Bytes:
		return int64(len(x)), true
	case *starlark.List:
		return int64(x.Len()), true
	case starlark.Tuple:
		return int64(len(x)), true
	}
	return 0, false
}

// opEstimate is the bytes x op y will allocate, by the operands alone.
func opEstimate(t *starlark.Thread, op string, x, y starlark.Value) (int64, error) {
	switch op {
	case "+", "+=", "|", "|=":
		return shallow(x) + shallow(y), nil
	case "*", "*=":
		if bx, ok := intBits(x); ok {
			if by, ok := intBits(y); ok {
				if bx+by > MaxIntBits {
					return 0, errIntTooLarge
				}
				return (bx+by)/8 + 16, nil
			}
			x, y = y, x
		}
		n, isSeq := seqLen(x)
		count, isInt := y.(starlark.Int)
		if !isSeq || !isInt {
			return 0, nil
		}
		c, ok := count.Int64()
		if !ok || c > 1<<40 {
			return 1 << 50, nil
		}
		per := int64(1)
		if _, isStr := x.(starlark.String); !isStr {
			if _, isBytes := x.(starlark.Bytes); !isBytes {
				per = 16
			}
		}
		return n * max(c, 0) * per, nil
	case "%", "%=":
		s, ok := x.(starlark.String)
		if !ok {
			return 0, nil
		}
		uses := int64(1)
		if _, isDict := y.(*starlark.Dict); isDict {
			uses = int64(strings.Count(string(s), "%"))
		}
		return int64(len(s)) + uses*reprSize(y, remaining(t)), nil
	case "<<", "<<=":
		bx, _ := intBits(x)
		var by int64
		if i, ok := y.(starlark.Int); ok {
			by, _ = i.Int64()
		}
		if bx+max(by, 0) > MaxIntBits {
			return 0, errIntTooLarge
		}
		return (bx+max(by, 0))/8 + 16, nil
	}
	return 0, nil
}

// MaxIntBits bounds the integers a behavior computes with * and <<: a
// product of two huge integers costs time the step budget does not see.
const MaxIntBits = 1 << 16

var errIntTooLarge = fmt.Errorf("integer limit: the result would have more than %d bits", MaxIntBits)

var builtinOp = starlark.NewBuiltin(opFn, func(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	op, x, y := string(args[0].(starlark.String)), args[1], args[2]
	n, err := opEstimate(t, op, x, y)
	if err != nil {
		return nil, err
	}
	if err := charge(t, n); err != nil {
		return nil, err
	}
	if l, ok := x.(*starlark.List); ok && op == "+=" {
		// list += iterable extends the list in place.
		iter, err := safeIterate(y)
		if err != nil {
			return nil, fmt.Errorf("unknown binary op: list += %s", y.Type())
		}
		var elems []starlark.Value // first, in case y is l
		var e starlark.Value
		for iter.Next(&e) {
			elems = append(elems, e)
		}
		iter.Done()
		for _, e := range elems {
			if err := l.Append(e); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	return starlark.Binary(opTokens[op], x, y)
})

func safeIterate(v starlark.Value) (starlark.Iterator, error) {
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("not iterable")
	}
	return it.Iterate(), nil
}

// methodEstimate is the bytes a growing method will allocate.
func methodEstimate(t *starlark.Thread, x starlark.Value, name string, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	switch s := x.(type) {
	case starlark.String:
		str := string(s)
		switch name {
		case "join":
			if len(args) != 1 {
				return 0
			}
			var n int64
			if seq, ok := args[0].(starlark.Indexable); ok {
				for i := range seq.Len() {
					n += shallow(seq.Index(i)) + int64(len(str))
				}
			}
			return n
		case "replace":
			if len(args) < 2 {
				return 0
			}
			old, ok1 := args[0].(starlark.String)
			nw, ok2 := args[1].(starlark.String)
			if !ok1 || !ok2 {
				return 0
			}
			count := int64(strings.Count(str, string(old)))
			if old == "" {
				count = int64(utf8.RuneCountInString(str)) + 1
			}
			return int64(len(str)) + count*int64(len(nw))
		case "format":
			var n int64
			lim := remaining(t)
			for _, a := range args {
				n += reprSize(a, lim)
			}
			for _, kv := range kwargs {
				n += reprSize(kv[1], lim)
			}
			return int64(len(str)) + int64(strings.Count(str, "{"))*n
		case "split", "rsplit", "splitlines":
			sep := "\n"
			if len(args) > 0 {
				if a, ok := args[0].(starlark.String); ok && a != "" {
					sep = string(a)
				} else {
					return int64(len(str))*16 + 24
				}
			} else if name != "splitlines" {
				return int64(len(str))*16 + 24
			}
			return int64(strings.Count(str, sep)+1)*32 + int64(len(str))
		case "elems", "codepoints", "elem_ords", "codepoint_ords":
			return int64(len(str))*32 + 24
		}
	case *starlark.List, *starlark.Dict:
		if (name == "extend" || name == "update") && len(args) == 1 {
			if seq, ok := args[0].(starlark.Sequence); ok {
				return int64(seq.Len()) * 64
			}
		}
	}
	return 0
}

var builtinMethod = starlark.NewBuiltin(methodFn, func(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	rest := args[2:]
	fn, err := getAttr(x, name)
	if err != nil {
		return nil, err
	}
	if err := charge(t, methodEstimate(t, x, name, rest, kwargs)); err != nil {
		return nil, err
	}
	return starlark.Call(t, fn, rest, kwargs)
})

// builtinAttr is x.name for a checked method taken as a value: a callable
// that charges its estimate before it runs, as a direct call would.
var builtinAttr = starlark.NewBuiltin(attrFn, func(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	fn, err := getAttr(x, name)
	if err != nil {
		return nil, err
	}
	if _, builtin := fn.(*starlark.Builtin); !builtin {
		return fn, nil // a field of that name, or a function kept in a struct
	}
	return starlark.NewBuiltin(name, func(t *starlark.Thread, _ *starlark.Builtin, rest starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := charge(t, methodEstimate(t, x, name, rest, kwargs)); err != nil {
			return nil, err
		}
		return starlark.Call(t, fn, rest, kwargs)
	}).BindReceiver(x), nil
})

func getAttr(x starlark.Value, name string) (starlark.Value, error) {
	if h, ok := x.(starlark.HasAttrs); ok {
		v, err := h.Attr(name)
		if err != nil {
			return nil, err
		}
		if v != nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
}

// checkedBuiltins wrap the converting built-ins: each charges the size
// of its result, by its argument, before it runs.
func checkedBuiltins() starlark.StringDict {
	out := starlark.StringDict{opFn: builtinOp, methodFn: builtinMethod, attrFn: builtinAttr}
	perElem := map[string]int64{"list": 16, "tuple": 16, "sorted": 16, "reversed": 16, "enumerate": 48, "set": 48, "dict": 64, "zip": 48}
	for name, per := range perElem {
		orig, ok := starlark.Universe[name].(*starlark.Builtin)
		if !ok {
			continue
		}
		out[name] = starlark.NewBuiltin(name, func(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var n int64
			for _, a := range args {
				if s, ok := a.(starlark.Sequence); ok {
					n = max(n, int64(s.Len()))
				}
			}
			if err := charge(t, n*per+int64(len(kwargs))*64); err != nil {
				return nil, err
			}
			return starlark.Call(t, orig, args, kwargs)
		})
	}
	for _, name := range []string{"str", "repr"} {
		orig := starlark.Universe[name].(*starlark.Builtin)
		out[name] = starlark.NewBuiltin(name, func(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) == 1 {
				if _, isStr := args[0].(starlark.String); !isStr || name == "repr" {
					if err := charge(t, reprSize(args[0], remaining(t))); err != nil {
						return nil, err
					}
				}
			}
			return starlark.Call(t, orig, args, kwargs)
		})
	}
	return out
}
