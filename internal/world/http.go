package world

// HTTP bindings: the route a real service answers an operation on, so
// that an agent's own HTTP client reaches the world by its base URL
// alone. The world keeps the route table of each package and the
// mappings between a request and an operation's input, and between an
// answer and the service's response (status, error body, headers);
// serving them is the transport's (internal/toolserver).

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/report"
)

// Route is an operation's HTTP binding.
type Route struct {
	Method string
	Path   string // the template as written: /v1/refunds/{id}
	segs   []routeSeg
	Params []string // path parameters, in order
	// Headers maps a request header (canonical form) to the argument it
	// carries.
	Headers map[string]string
	// Body, when set, is the argument that holds the whole JSON body;
	// otherwise the body's members are arguments.
	Body string
	// Status is the status of a success (200 unless given; 204 answers
	// no body).
	Status int
	// Errors is the status of an error code, for this operation.
	Errors map[string]int
	Pos    yamlpos.Pos
}

type routeSeg struct {
	lit   string
	param string // set: the segment is a parameter
}

// PackageHTTP is what a package's HTTP API shares across its routes.
type PackageHTTP struct {
	// Env is the variable an agent reads the service's base URL from;
	// agent.command runs set it to the package's base URL.
	Env string
	// Tokens maps a bearer token to the actor it calls as. When given, a
	// request without a known token is answered 401.
	Tokens map[string]string
	// Errors is the status of an error code, for every route.
	Errors map[string]int
	// ErrorBody is the body of an error answer, with {{code}},
	// {{message}}, {{retryable}} and {{status}} filled in.
	ErrorBody any
	// RetryAfter is the Retry-After (seconds) of a retryable error.
	RetryAfter int
	// IdempotencyHeader carries the idempotency key (Idempotency-Key).
	IdempotencyHeader string
	// Routes are the package's bound operations, by path then method.
	Routes []*Operation
}

// DefaultErrorBody is an error answer's body unless the package says
// otherwise.
var DefaultErrorBody = map[string]any{"error": map[string]any{"code": "{{code}}", "message": "{{message}}", "retryable": "{{retryable}}"}}

// DefaultIdempotencyHeader carries the idempotency key of a request.
const DefaultIdempotencyHeader = "Idempotency-Key"

var (
	httpMethods   = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
	paramSeg      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{([A-Za-z_][A-Za-z0-9_.-]*)\}$`) })
	placeholder   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{([^}]*)\}\}`) })
	envName       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	placeholdersK = []string{"code", "message", "retryable", "status"}
)

// HTTPEvidence is the HTTP request that made a call.
type HTTPEvidence = report.HTTPEvidence

// route reads an operation's http: a "METHOD /path" string or a mapping.
func (l *loader) route(op *Operation, q yamlpos.KV) {
	rt := &Route{Pos: l.doc.Pos(q.V), Headers: map[string]string{}, Errors: map[string]int{}}
	var methodNode, pathNode = q.V, q.V
	if s, ok := q.Val.(string); ok {
		m, p, _ := strings.Cut(strings.TrimSpace(s), " ")
		rt.Method, rt.Path = m, strings.TrimSpace(p)
	}
	for _, p := range yamlpos.Pairs(q.V, q.Val) {
		switch p.Key() {
		case "method":
			rt.Method, methodNode = str(p.Val), p.V
		case "path":
			rt.Path, pathNode = str(p.Val), p.V
		case "body":
			rt.Body = str(p.Val)
			l.argWarn(p.V, op, rt.Body, "body")
		case "status":
			if n, ok := p.Val.(json.Number); ok {
				rt.Status, _ = strconv.Atoi(string(n))
				if rt.Status < 200 || rt.Status > 299 {
					l.errorf(p.V, "http.status %s of %s: a success status is 200 to 299", n, op.Key)
				}
			}
		case "headers":
			for _, h := range yamlpos.Pairs(p.V, p.Val) {
				arg := str(h.Val)
				rt.Headers[http.CanonicalHeaderKey(h.Key())] = arg
				l.argWarn(h.V, op, arg, "header "+h.Key())
			}
		}
	}
	rt.Method = strings.ToUpper(rt.Method)
	if !slices.Contains(httpMethods, rt.Method) {
		l.errorf(methodNode, "http method %q of %s: want one of %s", rt.Method, op.Key, strings.Join(httpMethods, ", "))
	}
	if err := rt.parsePath(); err != nil {
		rt.segs, rt.Params = nil, nil
		l.errorf(pathNode, "http path %q of %s: %v", rt.Path, op.Key, err)
	}
	for _, name := range rt.Params {
		l.argWarn(pathNode, op, name, "path parameter {"+name+"}")
	}
	rt.Errors = l.statusMap(yamlpos.Get(q.V, q.Val, "errors"), op, nil)
	op.Route = rt
}

// argWarn warns when a binding names an argument the input does not
// declare (only when the input declares properties).
func (l *loader) argWarn(n *yaml.Node, op *Operation, arg, what string) {
	props := properties(op.Input)
	if props == nil || arg == "" {
		return
	}
	if _, ok := props[arg]; !ok {
		l.doc.Warnf(n, "%s of %s maps to %q, which is not a property of its input%s", what, op.Key, arg, suggest.DidYouMean(arg, sortedKeys(props)))
	}
}

// statusMap reads an errors: mapping of code to HTTP status. A code must
// be one of op's declared errors or one the world answers itself; for a
// package (op nil) one some operation of pkg declares.
func (l *loader) statusMap(p yamlpos.KV, op *Operation, pkg []*Operation) map[string]int {
	out := map[string]int{}
	for _, e := range yamlpos.Pairs(p.V, p.Val) {
		code := e.Key()
		if n, ok := e.Val.(json.Number); ok {
			s, err := strconv.Atoi(string(n))
			if err != nil || s < 400 || s > 599 {
				l.errorf(e.V, "status %s of error %s: an error status is 400 to 599", n, code)
				continue
			}
			out[code] = s
		}
		if slices.Contains(worldCodes, code) {
			continue
		}
		if op != nil {
			if _, ok := op.Errors[code]; !ok {
				l.undeclared(e.K, op, code)
			}
			continue
		}
		declared := false
		var all []string
		for _, o := range pkg {
			if _, ok := o.Errors[code]; ok {
				declared = true
			}
			all = append(all, sortedKeys(o.Errors)...)
		}
		if !declared {
			l.doc.Warnf(e.K, "error %q is declared by no operation of this package%s", code, suggest.DidYouMean(code, all))
		}
	}
	return out
}

// worldCodes are the errors the world answers itself.
var worldCodes = []string{CodeUnknownOperation, CodeInvalidInput, CodePermission, CodeBudget, CodeBehaviorFailed, CodeInvalidOutput, CodeNotImplemented, CodeEnded, CodeEventLimit}

// parsePath splits the template into literal and parameter segments.
func (rt *Route) parsePath() error {
	if !strings.HasPrefix(rt.Path, "/") {
		return fmt.Errorf("a path starts with /, e.g. /v1/refunds/{id}")
	}
	seen := map[string]bool{}
	for _, s := range strings.Split(rt.Path[1:], "/") {
		if m := paramSeg().FindStringSubmatch(s); m != nil {
			if seen[m[1]] {
				return fmt.Errorf("parameter {%s} appears twice", m[1])
			}
			seen[m[1]] = true
			rt.segs = append(rt.segs, routeSeg{param: m[1]})
			rt.Params = append(rt.Params, m[1])
			continue
		}
		if strings.ContainsAny(s, "{}") {
			return fmt.Errorf("segment %q: a parameter is a whole segment, {name}", s)
		}
		if strings.ContainsAny(s, "?#") {
			return fmt.Errorf("segment %q: a path has no query or fragment (query parameters are arguments by name)", s)
		}
		rt.segs = append(rt.segs, routeSeg{lit: s})
	}
	return nil
}

// shape is the template with its parameters' names left out: two routes
// of one method and shape conflict.
func (rt *Route) shape() string {
	var b strings.Builder
	for _, s := range rt.segs {
		b.WriteByte('/')
		if s.param != "" {
			b.WriteString("{}")
		} else {
			b.WriteString(s.lit)
		}
	}
	return b.String()
}

// packageHTTP reads a package's http: and checks its bound routes.
func (l *loader) packageHTTP(pkg *Package, q yamlpos.KV, ops []*Operation) {
	ph := &PackageHTTP{IdempotencyHeader: DefaultIdempotencyHeader, ErrorBody: DefaultErrorBody, Errors: map[string]int{}}
	for _, p := range yamlpos.Pairs(q.V, q.Val) {
		switch p.Key() {
		case "env":
			ph.Env = str(p.Val)
			if !envName().MatchString(ph.Env) {
				l.errorf(p.V, "http.env %q is not an environment variable name (letters, digits and _)", ph.Env)
			} else if strings.HasPrefix(ph.Env, "DRYFIRE_") || slices.Contains(reservedEnv, ph.Env) {
				l.errorf(p.V, "http.env %q is a variable dryfire sets itself; name the variable your agent reads the service's base URL from", ph.Env)
			}
		case "tokens":
			ph.Tokens = map[string]string{}
			for _, t := range yamlpos.Pairs(p.V, p.Val) {
				actor := str(t.Val)
				ph.Tokens[t.Key()] = actor
				if l.actorNames != nil && !slices.Contains(l.actorNames, actor) {
					l.errorf(t.V, "token %q calls as actor %q, which the world does not declare%s", t.Key(), actor, suggest.DidYouMean(actor, l.actorNames))
				}
			}
		case "error_body":
			ph.ErrorBody = p.Val
			l.checkTemplate(p.V, p.Val)
		case "retry_after":
			if n, ok := p.Val.(json.Number); ok {
				ph.RetryAfter, _ = strconv.Atoi(string(n))
			}
		case "idempotency_header":
			ph.IdempotencyHeader = http.CanonicalHeaderKey(str(p.Val))
		}
	}
	ph.Errors = l.statusMap(yamlpos.Get(q.V, q.Val, "errors"), nil, ops)
	pkg.HTTP = ph
}

// reservedEnv are variables dryfire sets for an agent.command program.
var reservedEnv = []string{"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PATH", "HOME", "TZ"}

// checkTemplate reports placeholders an error body does not know.
func (l *loader) checkTemplate(n *yaml.Node, v any) {
	switch x := v.(type) {
	case string:
		for _, m := range placeholder().FindAllStringSubmatch(x, -1) {
			if !slices.Contains(placeholdersK, m[1]) {
				l.errorf(n, "error_body placeholder {{%s}}: want {{code}}, {{message}}, {{retryable}} or {{status}}%s", m[1], suggest.DidYouMean(m[1], placeholdersK))
			}
		}
	case map[string]any:
		for _, p := range yamlpos.Pairs(n, x) {
			l.checkTemplate(p.V, p.Val)
		}
	case []any:
		for _, it := range yamlpos.Items(n, x) {
			l.checkTemplate(it.N, it.Val)
		}
	}
}

// routes finishes a package's route table: a package with bound
// operations gets an http: of defaults when it has none; two routes of
// one method and shape conflict.
func (l *loader) routes(pkg *Package, ops []*Operation, nodes map[*Operation]*yaml.Node, httpNode *yaml.Node) {
	bound := slices.DeleteFunc(slices.Clone(ops), func(op *Operation) bool { return op.Route == nil })
	if len(bound) == 0 {
		if pkg.HTTP != nil && httpNode != nil {
			l.doc.Warnf(httpNode, "package %s has http: but no operation declares a route (http: on an operation); it serves no HTTP API", pkg.Name)
			pkg.HTTP = nil
		}
		return
	}
	if pkg.HTTP == nil {
		pkg.HTTP = &PackageHTTP{IdempotencyHeader: DefaultIdempotencyHeader, ErrorBody: DefaultErrorBody, Errors: map[string]int{}}
	}
	seen := map[string]*Operation{}
	for _, op := range bound {
		if op.Route.segs == nil && op.Route.Path != "/" {
			continue // the path did not parse
		}
		k := op.Route.Method + " " + op.Route.shape()
		if prev := seen[k]; prev != nil {
			l.errorf(nodes[op], "route %s %s of %s conflicts with %s %s of %s (line %d): one method and path shape answer one operation", op.Route.Method, op.Route.Path, op.Key, prev.Route.Method, prev.Route.Path, prev.Key, prev.Route.Pos.Line)
			continue
		}
		seen[k] = op
	}
	slices.SortStableFunc(bound, func(a, b *Operation) int {
		return cmp.Or(strings.Compare(a.Route.Path, b.Route.Path), strings.Compare(a.Route.Method, b.Route.Method))
	})
	pkg.HTTP.Routes = bound
}

// Match finds the route of a request path (split at /, each segment
// unescaped) and method: a literal segment wins over a parameter. With no
// route of that method, allow lists the methods the path has.
func (ph *PackageHTTP) Match(method string, segs []string) (op *Operation, params map[string]string, allow []string) {
	best := -1
	for _, o := range ph.Routes {
		rt := o.Route
		score, ok := rt.matchSegs(segs)
		if !ok {
			continue
		}
		if rt.Method != method {
			if !slices.Contains(allow, rt.Method) {
				allow = append(allow, rt.Method)
			}
			continue
		}
		if score > best {
			best, op = score, o
		}
	}
	if op == nil {
		sort.Strings(allow)
		return nil, nil, allow
	}
	params = make(map[string]string, len(op.Route.Params))
	for i, s := range op.Route.segs {
		if s.param != "" {
			params[s.param] = segs[i]
		}
	}
	return op, params, nil
}

// matchSegs reports whether the route matches; score ranks literal
// segments earlier in the path higher.
func (rt *Route) matchSegs(segs []string) (int, bool) {
	if len(segs) != len(rt.segs) {
		return 0, false
	}
	score := 0
	for i, s := range rt.segs {
		score <<= 1
		if s.param == "" {
			if s.lit != segs[i] {
				return 0, false
			}
			score |= 1
		} else if segs[i] == "" {
			return 0, false
		}
	}
	return score, true
}

// Closest is the route nearest a request that matched none: the most
// segments in common, then the method, then the path's spelling.
func (ph *PackageHTTP) Closest(method string, segs []string) *Operation {
	var best *Operation
	bestScore := -1 << 30
	for _, o := range ph.Routes {
		rt := o.Route
		score := 0
		for i, s := range rt.segs {
			if i < len(segs) && (s.param != "" && segs[i] != "" || s.lit == segs[i]) {
				score += 4
			}
		}
		n := len(segs) - len(rt.segs)
		score -= 4 * max(n, -n)
		if rt.Method == method {
			score += 2
		}
		score -= suggest.Distance("/"+strings.Join(segs, "/"), rt.Path) / 8
		if score > bestScore {
			best, bestScore = o, score
		}
	}
	return best
}

// Status is the HTTP status of an answer to op over its route: a
// success's status, else the error code's status (the operation's, the
// package's, else the world's default).
func (ph *PackageHTTP) Status(op *Operation, r *Response) int {
	if r.Error == nil {
		return cmp.Or(op.Route.Status, http.StatusOK)
	}
	if s, ok := op.Route.Errors[r.Error.Code]; ok {
		return s
	}
	if s, ok := ph.Errors[r.Error.Code]; ok {
		return s
	}
	return r.HTTPStatus()
}

// ErrorValue is the package's error body for an error answered at status.
func (ph *PackageHTTP) ErrorValue(e *ErrorEnvelope, status int) any {
	return fill(ph.ErrorBody, e, status)
}

func fill(v any, e *ErrorEnvelope, status int) any {
	return value.Map(v, func(v any) any {
		x, ok := v.(string)
		if !ok {
			return v
		}
		switch x {
		case "{{retryable}}":
			return e.Retryable
		case "{{status}}":
			return json.Number(strconv.Itoa(status))
		}
		return placeholder().ReplaceAllStringFunc(x, func(m string) string {
			switch m {
			case "{{code}}":
				return e.Code
			case "{{message}}":
				return e.Message
			case "{{retryable}}":
				return strconv.FormatBool(e.Retryable)
			case "{{status}}":
				return strconv.Itoa(status)
			}
			return m
		})
	})
}

// Coerce converts a path, query or header value (text) to the type the
// input schema gives the argument: integer, number, boolean, or an array
// of them; anything else stays text, for the input schema to judge.
func (op *Operation) Coerce(arg string, vals []string) any {
	prop, _ := properties(op.Input)[arg].(map[string]any)
	t := schemaType(prop)
	if t == "array" {
		items, _ := prop["items"].(map[string]any)
		it := schemaType(items)
		out := make([]any, len(vals))
		for i, v := range vals {
			out[i] = scalar(it, v)
		}
		return out
	}
	return scalar(t, vals[len(vals)-1])
}

func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
	}
	return ""
}

func scalar(t, v string) any {
	switch t {
	case "integer", "number":
		if x, err := value.Parse([]byte(v)); err == nil {
			if n, ok := x.(json.Number); ok {
				return n
			}
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return v
}
