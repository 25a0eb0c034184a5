// Package openapi writes a world package from an OpenAPI 3.0 or 3.1
// document, so that an agent written against a REST service can be
// drilled before anyone writes a behavior: operations named from
// operationId, input schemas from parameters and request bodies, output
// schemas from the success response, declared errors from the error
// responses, HTTP bindings from the paths, and a generic resource
// behavior (create, get, list, update, delete keep records in state by
// id) in a Starlark module of its own, to edit or override.
//
// It writes text and never imports the world package: the command that
// calls it validates what it wrote with the world loader. What the
// import does not support is a positioned warning, never a silent drop.
package openapi

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Options of an import.
type Options struct {
	Package string // the world package's name
	Env     string // the base URL variable; "" is PACKAGE_URL
	Module  string // the behavior module's file name; "" is PACKAGE.star
	Source  string // the document's name, for the header comment
}

// Result is what an import writes.
type Result struct {
	World, Module []byte
	Operations    int
	Warnings      yamlpos.Diagnostics // positioned in the document
}

// MaxRefDepth bounds how deep $ref resolution nests inside one schema.
const MaxRefDepth = 32

// MaxSchemaNodes bounds the schema nodes the import writes in all, $refs
// inlined: a document whose references fan out (A uses B twice, B uses C
// twice, ...) would otherwise grow without end.
const MaxSchemaNodes = 50_000

var methods = []string{"get", "put", "post", "delete", "patch"}

// Import converts an OpenAPI document. The error is a document that is
// not OpenAPI 3.0 or 3.1 (positioned); problems of single operations are
// warnings.
func Import(file string, data []byte, o Options) (*Result, yamlpos.Diagnostics) {
	doc := yamlpos.ParseDocument(file, data, "OpenAPI document", "empty file: expected an OpenAPI 3.0 or 3.1 document")
	if doc.Root == nil {
		return nil, doc.Diagnostics()
	}
	root, ok := doc.Value.(map[string]any)
	if !ok {
		doc.Errorf(doc.Root, "an OpenAPI document is a mapping, not %s", yamlpos.Describe(doc.Value))
		return nil, doc.Diagnostics()
	}
	im := &importer{doc: doc, root: root, o: o, names: map[string]bool{}, colls: map[string]bool{}, warned: map[*yaml.Node]bool{}}
	if o.Env == "" {
		im.o.Env = strings.ToUpper(badIdent().ReplaceAllString(o.Package, "_")) + "_URL"
	}
	if o.Module == "" {
		im.o.Module = o.Package + ".star"
	}
	ver := str(root["openapi"])
	switch {
	case strings.HasPrefix(ver, "3.0"):
		im.v30 = true
	case strings.HasPrefix(ver, "3.1"):
	case root["swagger"] != nil:
		_, n := yamlpos.Lookup(doc.Root, "swagger")
		doc.Errorf(n, "swagger %v is OpenAPI 2; convert it to OpenAPI 3 first (e.g. with swagger2openapi)", root["swagger"])
		return nil, doc.Diagnostics()
	default:
		n, _ := yamlpos.Lookup(doc.Root, "openapi")
		n = cmp.Or(n, doc.Root)
		doc.Errorf(n, "openapi %q: want an OpenAPI 3.0 or 3.1 document (openapi: 3.0.3, 3.1.0)", ver)
		return nil, doc.Diagnostics()
	}
	if kn, _ := yamlpos.Lookup(doc.Root, "webhooks"); kn != nil {
		doc.Warnf(kn, "webhooks are not imported: a world answers requests, it does not send them")
	}
	if comps, _ := root["components"].(map[string]any); comps["securitySchemes"] != nil {
		_, cn := yamlpos.Lookup(doc.Root, "components")
		n, _ := yamlpos.Lookup(cn, "securitySchemes")
		doc.Warnf(n, "security schemes are not enforced: without http.tokens every request calls as the drill's actor (http.tokens maps bearer tokens to actors)")
	}
	im.paths()
	if len(im.ops) == 0 {
		n, _ := yamlpos.Lookup(doc.Root, "paths")
		n = cmp.Or(n, doc.Root)
		doc.Errorf(n, "the document has no operation to import (paths with get, put, post, delete or patch)")
		return nil, doc.Diagnostics()
	}
	world, err := im.world()
	if err == nil {
		var module []byte
		if module, err = im.module(); err == nil {
			if ds := doc.Diagnostics(); ds.HasErrors() {
				return nil, ds
			}
			return &Result{World: world, Module: module, Operations: len(im.ops), Warnings: doc.Diagnostics()}, nil
		}
	}
	// A bug of the import, never of the document: nothing is written.
	doc.Errorf(doc.Root, "the import wrote text that does not read back as meant (a bug of dryfire world import: please report it with the document): %v", err)
	return nil, doc.Diagnostics()
}

type importer struct {
	doc   *yamlpos.Document
	root  map[string]any
	o     Options
	v30   bool
	ops   []*operation
	names map[string]bool
	colls map[string]bool
	body  any // the error body template, from the first error schema
	bodyN *yaml.Node
	// warned are the parameters of a path item already warned about: its
	// operations share them.
	warned map[*yaml.Node]bool
	nodes  int // schema nodes written so far (MaxSchemaNodes)
}

// operation is one imported operation.
type operation struct {
	name, fn     string
	method, path string
	description  string
	props        map[string]any
	propOrder    []string
	required     []string
	headers      map[string]string
	bodyArg      string
	idempotent   bool
	output       any
	status       int
	errors       map[string]int // code → status
	retryable    map[string]bool
	kind         string // create, get, list, update, replace, delete; "" none
	coll, idArg  string
	idField      string
	intID        bool
}

var (
	badIdent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]`) })
	badName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_.-]`) })
	pathVar  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{(.+)\}$`) })
)

func str(v any) string { s, _ := v.(string); return s }

func (im *importer) paths() {
	_, pn := yamlpos.Lookup(im.doc.Root, "paths")
	paths, _ := im.root["paths"].(map[string]any)
	for _, p := range yamlpos.Pairs(pn, paths) {
		item, _ := p.Val.(map[string]any)
		if why := badPath(p.Key()); why != "" {
			im.doc.Warnf(p.K, "path %q is not imported: %s", p.Key(), why)
			continue
		}
		if _, ok := item["$ref"]; ok {
			k, _ := yamlpos.Lookup(p.V, "$ref")
			im.doc.Warnf(k, "path %s: a path item $ref is not imported", p.Key())
			continue
		}
		var shared []yamlpos.KV
		for _, q := range yamlpos.Pairs(p.V, item) {
			switch k := q.Key(); {
			case k == "parameters":
				for _, it := range yamlpos.Items(q.V, q.Val) {
					shared = append(shared, yamlpos.KV{V: it.N, Val: it.Val})
				}
			case slices.Contains(methods, k):
			case k == "head" || k == "options" || k == "trace":
				im.doc.Warnf(q.K, "%s %s is not imported (a world binds GET, PUT, POST, DELETE and PATCH)", strings.ToUpper(k), p.Key())
			case k == "servers":
				im.doc.Warnf(q.K, "path %s: servers of a path are not imported; routes are relative to the package's base URL", p.Key())
			}
		}
		for _, q := range yamlpos.Pairs(p.V, item) {
			if slices.Contains(methods, q.Key()) {
				im.operation(p.Key(), q, shared)
			}
		}
	}
}

// paramSeg is a path segment that is a parameter, as a world's route
// takes it.
var paramSeg = regexp.MustCompile(`^\{([A-Za-z_][A-Za-z0-9_.-]*)\}$`)

// badPath says why a path key cannot be a world's route ("" when it can):
// it starts with /, holds no control character, and a parameter is a
// whole segment with a plain name.
func badPath(path string) string {
	if !strings.HasPrefix(path, "/") {
		return "a path starts with /"
	}
	if strings.ContainsFunc(path, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "it holds a control character (a newline?)"
	}
	for _, seg := range strings.Split(path[1:], "/") {
		if strings.ContainsAny(seg, "{}") && !paramSeg.MatchString(seg) {
			return fmt.Sprintf("segment %q: a parameter is a whole segment named with letters, digits, _, . and -, {name}", seg)
		}
	}
	return ""
}

func (im *importer) operation(path string, q yamlpos.KV, shared []yamlpos.KV) {
	m, _ := q.Val.(map[string]any)
	op := &operation{method: strings.ToUpper(q.Key()), path: path, props: map[string]any{}, headers: map[string]string{}, errors: map[string]int{}, retryable: map[string]bool{}}
	id := str(m["operationId"])
	_, idNode := yamlpos.Lookup(q.V, "operationId")
	if id == "" {
		id = strings.ToLower(q.Key()) + strings.ReplaceAll(badIdent().ReplaceAllString(path, "_"), "__", "_")
		id = strings.TrimRight(id, "_")
		im.doc.Warnf(q.K, "%s %s has no operationId; it is imported as %s", op.method, path, id)
	} else if clean := badName().ReplaceAllString(id, "_"); clean != id {
		im.doc.Warnf(idNode, "operationId %q is imported as %s (an operation name is letters, digits, _, . and -)", id, clean)
		id = clean
	}
	for base, i := id, 2; im.names[id]; i++ {
		id = fmt.Sprintf("%s_%d", base, i)
	}
	im.names[id] = true
	op.name = id
	op.fn = badIdent().ReplaceAllString(id, "_")
	if op.fn[0] >= '0' && op.fn[0] <= '9' {
		op.fn = "op_" + op.fn
	}
	op.description = str(m["summary"])
	if op.description == "" {
		op.description, _, _ = strings.Cut(strings.TrimSpace(str(m["description"])), "\n")
	}
	for _, k := range []string{"callbacks", "security", "servers"} {
		if kn, _ := yamlpos.Lookup(q.V, k); kn != nil && (k != "security" || len(asList(m[k])) > 0) {
			im.doc.Warnf(kn, "%s of %s %s are not imported", k, op.method, path)
		}
	}
	// Parameters: the path item's, then the operation's over them.
	params := append([]yamlpos.KV(nil), shared...)
	if _, pn := yamlpos.Lookup(q.V, "parameters"); pn != nil {
		for _, it := range yamlpos.Items(pn, m["parameters"]) {
			params = append(params, yamlpos.KV{V: it.N, Val: it.Val})
		}
	}
	seen := map[string]string{}
	for _, p := range params {
		im.parameter(op, p, seen)
	}
	if rb, ok := m["requestBody"]; ok {
		_, n := yamlpos.Lookup(q.V, "requestBody")
		im.requestBody(op, n, rb)
	}
	_, rn := yamlpos.Lookup(q.V, "responses")
	im.responses(op, rn, m["responses"])
	im.classify(op)
	im.ops = append(im.ops, op)
}

func asList(v any) []any { l, _ := v.([]any); return l }

// parameter adds a path, query or header parameter to the input.
func (im *importer) parameter(op *operation, p yamlpos.KV, seen map[string]string) {
	pm, n := im.deref(p.V, p.Val)
	m, _ := pm.(map[string]any)
	name, in := str(m["name"]), str(m["in"])
	if name == "" {
		return
	}
	switch in {
	case "path", "query", "header":
	default:
		if !im.warned[n] {
			im.doc.Warnf(n, "parameter %s in %s of %s is not imported (path, query and header parameters are)", name, in, op.path)
		}
		im.warned[n] = true
		return
	}
	if in == "header" && slices.Contains([]string{"accept", "content-type", "authorization"}, strings.ToLower(name)) {
		return // the transport's, not an argument (OpenAPI ignores them too)
	}
	if in == "header" && strings.EqualFold(name, "Idempotency-Key") {
		op.idempotent = true // the world's idempotency key: a repeated one answers the receipt
		return
	}
	style, explode := str(m["style"]), m["explode"]
	if style != "" && !(in == "path" && style == "simple" || in == "query" && style == "form" || in == "header" && style == "simple") || in == "query" && explode == false {
		k, _ := yamlpos.Lookup(n, "style")
		if k == nil {
			k, _ = yamlpos.Lookup(n, "explode")
		}
		im.doc.Warnf(k, "parameter %s of %s %s: only the default style is imported (path and header simple, query form with explode); the value arrives as text", name, op.method, op.path)
	}
	if prev, dup := seen[name]; dup && prev != in {
		im.doc.Warnf(n, "parameter %s of %s %s is in the %s and in the %s: they are one argument", name, op.method, op.path, prev, in)
	}
	seen[name] = in
	schema := map[string]any{"type": "string"}
	if s, ok := m["schema"]; ok {
		_, sn := yamlpos.Lookup(n, "schema")
		schema, _ = im.schema(sn, s, 0, nil).(map[string]any)
	} else if _, ok := m["content"]; ok {
		k, _ := yamlpos.Lookup(n, "content")
		im.doc.Warnf(k, "parameter %s of %s %s: content (a serialized parameter) is not imported; it arrives as text", name, op.method, op.path)
	}
	if d := str(m["description"]); d != "" && schema != nil {
		if _, has := schema["description"]; !has {
			schema["description"] = d
		}
	}
	if _, had := op.props[name]; !had {
		op.propOrder = append(op.propOrder, name)
	}
	op.props[name] = schema
	if (in == "path" || m["required"] == true) && !slices.Contains(op.required, name) {
		op.required = append(op.required, name)
	}
	if in == "header" {
		op.headers[name] = name
	}
}

// requestBody merges a JSON body's object schema into the input, or
// makes it the body argument.
func (im *importer) requestBody(op *operation, n *yaml.Node, v any) {
	bv, bn := im.deref(n, v)
	b, _ := bv.(map[string]any)
	content, _ := b["content"].(map[string]any)
	_, cn := yamlpos.Lookup(bn, "content")
	media, mn := jsonMedia(cn, content)
	for _, p := range yamlpos.Pairs(cn, content) {
		if p.Key() != media {
			im.doc.Warnf(p.K, "request body %s of %s %s is not imported (JSON bodies are)", p.Key(), op.method, op.path)
		}
	}
	if media == "" {
		return
	}
	mm, _ := content[media].(map[string]any)
	_, sn := yamlpos.Lookup(mn, "schema")
	s, _ := im.schema(sn, mm["schema"], 0, nil).(map[string]any)
	props, _ := s["properties"].(map[string]any)
	if s["type"] != "object" || props == nil || s["allOf"] != nil || s["oneOf"] != nil || s["anyOf"] != nil {
		op.bodyArg = "body"
		op.props["body"] = s
		op.propOrder = append(op.propOrder, "body")
		if b["required"] == true {
			op.required = append(op.required, "body")
		}
		return
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		ps, _ := props[k].(map[string]any)
		if ps["readOnly"] == true {
			continue // the service sets it
		}
		if _, had := op.props[k]; !had {
			op.propOrder = append(op.propOrder, k)
		}
		op.props[k] = props[k]
	}
	for _, r := range asList(s["required"]) {
		if r, ok := r.(string); ok && op.props[r] != nil && !slices.Contains(op.required, r) {
			op.required = append(op.required, r)
		}
	}
}

// jsonMedia picks the JSON media type of a content map.
func jsonMedia(n *yaml.Node, content map[string]any) (string, *yaml.Node) {
	for _, p := range yamlpos.Pairs(n, content) {
		k := strings.ToLower(p.Key())
		if k == "application/json" || strings.HasSuffix(k, "+json") || k == "*/*" {
			return p.Key(), p.V
		}
	}
	return "", nil
}

// errorNames are the codes given to error responses by their status.
var errorNames = map[int]string{
	400: "BAD_REQUEST", 401: "UNAUTHORIZED", 402: "PAYMENT_REQUIRED", 403: "FORBIDDEN", 404: "NOT_FOUND",
	405: "METHOD_NOT_ALLOWED", 406: "NOT_ACCEPTABLE", 408: "REQUEST_TIMEOUT", 409: "CONFLICT", 410: "GONE",
	412: "PRECONDITION_FAILED", 413: "PAYLOAD_TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE",
	422: "UNPROCESSABLE_ENTITY", 423: "LOCKED", 429: "TOO_MANY_REQUESTS",
	500: "INTERNAL_ERROR", 501: "NOT_IMPLEMENTED_BY_SERVICE", 502: "BAD_GATEWAY", 503: "SERVICE_UNAVAILABLE", 504: "GATEWAY_TIMEOUT",
}

// retryableStatus are the statuses a client retries.
var retryableStatus = map[int]bool{408: true, 429: true, 502: true, 503: true, 504: true}

func (im *importer) responses(op *operation, n *yaml.Node, v any) {
	resp, _ := v.(map[string]any)
	var codes []string
	for _, p := range yamlpos.Pairs(n, resp) {
		codes = append(codes, p.Key())
	}
	sort.Strings(codes)
	for _, code := range codes {
		kn, vn := yamlpos.Lookup(n, code)
		rv, rn := im.deref(vn, resp[code])
		r, _ := rv.(map[string]any)
		content, _ := r["content"].(map[string]any)
		_, cn := yamlpos.Lookup(rn, "content")
		media, mn := jsonMedia(cn, content)
		var schema any
		if media != "" {
			mm, _ := content[media].(map[string]any)
			_, sn := yamlpos.Lookup(mn, "schema")
			if s, ok := mm["schema"]; ok {
				schema = im.schema(sn, s, 0, nil)
			}
		}
		status, err := strconv.Atoi(strings.ReplaceAll(strings.ToUpper(code), "XX", "00"))
		switch {
		case code == "default":
			im.errorBody(cmp.Or(mn, cn), schema)
		case err != nil || status < 100 || status > 599:
			im.doc.Warnf(kn, "response %q of %s %s is not a status; not imported", code, op.method, op.path)
		case status < 300:
			if op.status != 0 {
				continue // the first success is the operation's
			}
			op.status = status
			if schema != nil && status != 204 {
				op.output = withoutWriteOnly(schema)
			}
		case status < 400:
			im.doc.Warnf(kn, "response %s of %s %s (a redirect) is not imported", code, op.method, op.path)
		default:
			name := errorNames[status]
			if name == "" || strings.Contains(strings.ToUpper(code), "X") {
				name = "HTTP_" + strings.ToUpper(code)
			}
			op.errors[name] = status
			op.retryable[name] = retryableStatus[status]
			im.errorBody(cmp.Or(mn, cn), schema)
		}
	}
	op.status = cmp.Or(op.status, 200)
}

// errorBody takes the package's error body from the first error schema
// that is an object: its message-like property gets {{message}}, its
// code-like property {{code}} (or {{status}} when it is a number).
func (im *importer) errorBody(n *yaml.Node, schema any) {
	if im.body != nil || schema == nil {
		return
	}
	s, _ := schema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		return
	}
	body := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[k].(map[string]any)
		t := str(p["type"])
		switch strings.ToLower(k) {
		case "message", "detail", "error_description", "description", "title":
			if body["__msg"] == nil {
				body[k], body["__msg"] = "{{message}}", true
			}
		case "code", "error", "type", "error_code", "status", "status_code":
			switch t {
			case "integer", "number":
				body[k] = "{{status}}"
			case "string", "":
				body[k] = "{{code}}"
			}
		}
	}
	delete(body, "__msg")
	if len(body) == 0 {
		im.doc.Warnf(n, "the error schema has no message or code property; errors answer dryfire's default body {\"error\": {\"code\", \"message\", \"retryable\"}}")
		im.body = false
		return
	}
	im.body, im.bodyN = body, n
}
