package openapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlnode"
)

// world writes the world file: one package, its HTTP API, its operations.
func (im *importer) world() ([]byte, error) {
	im.finish()
	info, _ := im.root["info"].(map[string]any)
	title := str(info["title"])
	name := strings.Trim(strings.ToLower(badIdent().ReplaceAllString(title, "-")), "-")
	for strings.Contains(name, "--") {
		name = strings.ReplaceAll(name, "--", "-")
	}
	name = cmp.Or(name, im.o.Package)
	httpN := mapping(kv("env", scalar(im.o.Env)))
	if b, ok := im.body.(map[string]any); ok {
		httpN.Content = append(httpN.Content, scalar("error_body"), flow(b))
	}
	state := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, c := range slices.Sorted(maps.Keys(im.colls)) {
		state.Content = append(state.Content, scalar(c), flow(map[string]any{}))
	}
	if len(im.colls) > 0 {
		state.Content = append(state.Content, scalar("_ids"), flow(map[string]any{}))
	}
	ops := mapping()
	for _, op := range im.ops {
		ops.Content = append(ops.Content, scalar(op.name), im.opNode(op))
	}
	pkg := mapping()
	if d := str(info["description"]); d != "" {
		first, _, _ := strings.Cut(strings.TrimSpace(d), "\n")
		pkg.Content = append(pkg.Content, scalar("description"), scalar(first))
	}
	pkg.Content = append(pkg.Content, scalar("http"), httpN, scalar("state"), state, scalar("operations"), ops)
	root := mapping(
		kv("version", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"}),
		kv("world", scalar(name)),
		kv("behaviors", flowSeq(im.o.Module)),
		kv("packages", mapping(kv(im.o.Package, pkg))),
	)
	var b bytes.Buffer
	src := cmp.Or(im.o.Source, im.doc.File)
	// The comment quotes the document (its title may hold a newline):
	// one line, escaped.
	head := fmt.Sprintf("Imported by dryfire world import from %s (OpenAPI %s", src, str(im.root["openapi"]))
	if title != "" {
		head += fmt.Sprintf(": %s %s", title, str(info["version"]))
	}
	b.WriteString("# " + yamlnode.CommentText(head) + ").\n# The behaviors in " + yamlnode.CommentText(im.o.Module) + " keep records in state by id; edit them, or\n# override single calls with toolOverrides.\n")
	// Read back once, with the header: it is yamlnode.Encode's check.
	b.Write(yamlnode.Dump(root))
	if err := yamlnode.Check(b.Bytes(), root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (im *importer) opNode(op *operation) *yaml.Node {
	n := mapping()
	if op.description != "" {
		n.Content = append(n.Content, scalar("description"), scalar(op.description))
	}
	route := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	route.Content = append(route.Content, scalar("method"), scalar(op.method), scalar("path"), scalar(op.path))
	if op.status != 200 {
		route.Content = append(route.Content, scalar("status"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(op.status)})
	}
	if op.bodyArg != "" {
		route.Content = append(route.Content, scalar("body"), scalar(op.bodyArg))
	}
	if len(op.headers) > 0 {
		h := map[string]any{}
		for k, v := range op.headers {
			h[k] = v
		}
		route.Content = append(route.Content, scalar("headers"), flow(h))
	}
	if len(op.errors) > 0 {
		e := map[string]any{}
		for k, v := range op.errors {
			e[k] = json.Number(strconv.Itoa(v))
		}
		route.Content = append(route.Content, scalar("errors"), flow(e))
	}
	n.Content = append(n.Content, scalar("http"), route)
	input := map[string]any{"type": "object"}
	if len(op.props) > 0 {
		input["properties"] = op.props
	}
	if len(op.required) > 0 {
		req := make([]any, len(op.required))
		for i, r := range op.required {
			req[i] = r
		}
		input["required"] = req
	}
	n.Content = append(n.Content, scalar("input"), flow(input))
	if op.output != nil {
		n.Content = append(n.Content, scalar("output"), flow(op.output))
	}
	if len(op.errors) > 0 {
		e := map[string]any{}
		for k := range op.errors {
			if op.retryable[k] {
				e[k] = map[string]any{"retryable": true}
			} else {
				e[k] = map[string]any{}
			}
		}
		n.Content = append(n.Content, scalar("errors"), flow(e))
	}
	if op.idempotent {
		n.Content = append(n.Content, scalar("idempotent"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	if op.kind != "" {
		n.Content = append(n.Content, scalar("behavior"), scalar(op.fn))
	}
	return n
}

// module writes the behavior module: the generic resource helpers, and
// one function per operation that has a generic behavior. What came from
// the document (a path, a collection or parameter name) is a comment
// made one line (yamlnode.CommentText) or a Starlark string literal
// (starlarkString); the module is parsed and compared with the calls
// meant before it is returned (checkModule).
func (im *importer) module() ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Behaviors of the %s package, written by dryfire world import: a generic\n", yamlnode.CommentText(im.o.Package))
	b.WriteString("# resource API that keeps records in state by id. Each operation's function\n")
	b.WriteString("# is its own: edit it, or override single calls with toolOverrides.\n")
	b.WriteString(moduleHelpers)
	var meant []call
	for _, op := range im.ops {
		if op.kind == "" {
			continue
		}
		c := op.call()
		meant = append(meant, c)
		fmt.Fprintf(&b, "\ndef %s(ctx, args):\n", c.fn)
		fmt.Fprintf(&b, "    # %s\n", yamlnode.CommentText(op.method+" "+op.path))
		args := []string{"ctx", "args"}
		for _, a := range c.args {
			switch x := a.(type) {
			case string:
				args = append(args, starlarkString(x))
			case bool:
				args = append(args, map[bool]string{true: "True", false: "False"}[x])
			}
		}
		fmt.Fprintf(&b, "    return %s(%s)\n", c.helper, strings.Join(args, ", "))
	}
	data := []byte(b.String())
	if err := checkModule(im.o.Module, data, meant); err != nil {
		return nil, err
	}
	return data, nil
}

// call is what an operation's function does: call helper with ctx, args
// and these arguments (strings and bools).
type call struct {
	fn, helper string
	args       []any
}

func (op *operation) call() call {
	c := call{fn: op.fn}
	switch op.kind {
	case "create":
		c.helper, c.args = "_create", []any{op.coll, op.idField, op.intID}
	case "list":
		c.helper, c.args = "_list", []any{op.coll, op.intID}
	case "get":
		c.helper, c.args = "_get", []any{op.coll, op.idArg}
	case "replace", "update":
		c.helper, c.args = "_update", []any{op.coll, op.idArg, op.idField, op.kind == "update"}
	case "delete":
		c.helper, c.args = "_delete", []any{op.coll, op.idArg, op.status != 204 && op.output != nil}
	}
	return c
}

// starlarkString is s as a Starlark string literal: double quoted, with
// quotes, backslashes and every control or non-printing character
// escaped (\n, \xHH for ASCII, \uXXXX and \UXXXXXXXX beyond).
func starlarkString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == utf8.RuneError || !unicode.IsPrint(r):
			if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

const moduleHelpers = `
_PAGING = ["limit", "offset", "page", "per_page", "page_size", "cursor"]

def _key(v):
    return str(v)

def _next_id(ctx, coll, integer):
    ids = ctx.state("_ids")
    n = ids.get(coll, 0) + 1
    ids[coll] = n
    return n if integer else str(n)

def _create(ctx, args, coll, id_field, integer):
    record = dict(args)
    if record.get(id_field) == None:
        record[id_field] = _next_id(ctx, coll, integer)
    ctx.state(coll)[_key(record[id_field])] = record
    return record

def _get(ctx, args, coll, id_arg):
    record = ctx.state(coll).get(_key(args[id_arg]))
    if record == None:
        return ctx.error("NOT_FOUND", "no %s %s" % (coll, args[id_arg]))
    return record

def _list(ctx, args, coll, integer):
    records = ctx.state(coll)
    keys = sorted(records.keys(), key = lambda k: int(k)) if integer else sorted(records.keys())
    out = []
    for k in keys:
        r = records[k]
        keep = True
        for name, want in args.items():
            if name in _PAGING or name not in r:
                continue
            if type(want) == "list":
                keep = keep and r[name] in want
            else:
                keep = keep and r[name] == want
        if keep:
            out.append(r)
    offset = args.get("offset", 0)
    out = out[offset:]
    if args.get("limit") != None:
        out = out[:args["limit"]]
    return out

def _update(ctx, args, coll, id_arg, id_field, merge):
    records = ctx.state(coll)
    key = _key(args[id_arg])
    old = records.get(key)
    if old == None:
        return ctx.error("NOT_FOUND", "no %s %s" % (coll, args[id_arg]))
    record = dict(old) if merge else {}
    record.update(args)
    if id_arg != id_field:
        record.pop(id_arg)
    record[id_field] = old[id_field] if id_field in old else args[id_arg]
    records[key] = record
    return record

def _delete(ctx, args, coll, id_arg, answer):
    records = ctx.state(coll)
    key = _key(args[id_arg])
    if key not in records:
        return ctx.error("NOT_FOUND", "no %s %s" % (coll, args[id_arg]))
    record = records.pop(key)
    return record if answer else None
`

// The node builders are yamlnode's.
var (
	scalar  = yamlnode.Scalar
	kv      = yamlnode.KV
	mapping = yamlnode.Mapping
	flowSeq = yamlnode.FlowSeq
	flow    = yamlnode.Flow
)

// crudKinds is the generic behavior of each method on a collection
// (/things) or one of its items (/things/{id}).
var crudKinds = map[string]string{
	"POST /things": "create", "GET /things": "list", "GET /things/{id}": "get",
	"PUT /things/{id}": "replace", "PATCH /things/{id}": "update", "DELETE /things/{id}": "delete",
}

// classify picks the generic behavior of an operation by its method and
// path: POST /things creates, GET /things lists, GET /things/{id} gets,
// PUT replaces, PATCH updates and DELETE deletes /things/{id}.
func (im *importer) classify(op *operation) {
	segs := strings.Split(strings.Trim(op.path, "/"), "/")
	last := segs[len(segs)-1]
	idParam := ""
	if m := pathVar().FindStringSubmatch(last); m != nil {
		idParam = m[1]
		segs = segs[:len(segs)-1]
	}
	coll := ""
	for i := len(segs) - 1; i >= 0; i-- {
		if !pathVar().MatchString(segs[i]) && segs[i] != "" {
			coll = strings.ToLower(badIdent().ReplaceAllString(segs[i], "_"))
			break
		}
	}
	if key := op.method + " /things"; coll != "" {
		if idParam != "" {
			key += "/{id}"
		}
		op.kind = crudKinds[key]
	}
	if op.kind == "" {
		return
	}
	op.coll, op.idArg, op.idField = coll, idParam, "id"
	im.colls[coll] = true
	if idParam != "" {
		if _, ok := op.errors["NOT_FOUND"]; !ok {
			op.errors["NOT_FOUND"] = 404 // what the generic behavior answers
		}
		if p, _ := op.props[idParam].(map[string]any); p["type"] == "integer" {
			op.intID = true
		}
	}
}

// finish settles what one operation's generic behavior needs from the
// others of its collection: the id field, and whether ids are integers.
func (im *importer) finish() {
	for _, op := range im.ops {
		if op.kind == "" {
			continue
		}
		for _, o := range im.ops {
			if o.coll != op.coll {
				continue
			}
			if o.intID {
				op.intID = true
			}
			if s := outputItem(o.output); s != nil {
				if p, ok := properties(s)[o.idArgOr()]; ok {
					op.idField = o.idArgOr()
					if pm, _ := p.(map[string]any); pm["type"] == "integer" {
						op.intID = true
					}
				}
			}
		}
	}
}

func (o *operation) idArgOr() string {
	if o.idArg != "" {
		if _, ok := properties(outputItem(o.output))[o.idArg]; ok {
			return o.idArg
		}
	}
	return "id"
}

func outputItem(v any) map[string]any {
	s, _ := v.(map[string]any)
	if s["type"] == "array" {
		s, _ = s["items"].(map[string]any)
	}
	return s
}

func properties(s map[string]any) map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}
