package toolserver

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// A world package's own HTTP API: the routes its operations declare
// (http:), served under /http/PACKAGE, so that an agent's HTTP client
// reaches the world by its base URL alone. A request becomes an
// operation call (path parameters, headers, query and JSON body merged
// into the arguments; the bearer token names the actor; the
// idempotency header carries the key) and runs the world's pipeline
// unchanged; the answer is the output at the route's status, or the
// package's error body at the error's status.

// CodeInvalidRequest's sibling codes of a package API's own answers: a
// request that named no route, or the wrong method, or no known token.
const (
	CodeNoRoute         = "NOT_FOUND"
	CodeMethod          = "METHOD_NOT_ALLOWED"
	CodeUnauthenticated = "UNAUTHENTICATED"
)

// HTTPPath is where a package's API is served under a scope's prefix.
func HTTPPath(pkg string) string { return "/http/" + pkg }

// serveHTTPIndex answers GET /http: the packages with an HTTP API.
func (a *worldAPI) serveHTTPIndex(w http.ResponseWriter, r *http.Request, _ string) {
	wd := a.in.World()
	list := []map[string]any{}
	for _, name := range wd.PackageList {
		ph := wd.Packages[name].HTTP
		if ph == nil {
			continue
		}
		e := map[string]any{"package": name, "base_url": "http://" + r.Host + r.URL.Path + "/" + name, "routes": len(ph.Routes)}
		if ph.Env != "" {
			e["env"] = ph.Env
		}
		list = append(list, e)
	}
	writeValue(w, http.StatusOK, map[string]any{"packages": list})
}

// serveHTTPAPI answers a request under /http/PACKAGE/.
func (a *worldAPI) serveHTTPAPI(w http.ResponseWriter, r *http.Request, rest string) {
	segs := restSegments(r, rest)
	wd := a.in.World()
	pkg := wd.Packages[segs[0]]
	if pkg == nil || pkg.HTTP == nil {
		noPackageAPI(w, r, wd, segs[0])
		return
	}
	ph := pkg.HTTP
	segs = segs[1:]
	if n := len(segs); n > 0 && segs[n-1] == "" {
		segs = segs[:n-1] // a trailing slash
	}
	path := "/" + strings.Join(segs, "/")
	op, params, allow := ph.Match(r.Method, segs)
	if op == nil && r.Method == http.MethodHead {
		op, params, allow = ph.Match(http.MethodGet, segs)
	}
	if op == nil {
		a.noRoute(w, r, pkg, segs, allow, rest)
		return
	}
	actor, ok := bearerActor(w, r, pkg, path)
	if !ok {
		return
	}
	args, text, err := requestArgs(w, r, op, params)
	if err != nil {
		writePackageError(w, ph, http.StatusBadRequest, &world.ErrorEnvelope{Code: CodeInvalidRequest, Message: fmt.Sprintf("%s %s: %v", r.Method, path, err)})
		return
	}
	req := world.Request{Operation: op.Key, Args: args, Arguments: text, Actor: actor,
		IdempotencyKey: r.Header.Get(ph.IdempotencyHeader),
		HTTP:           &world.HTTPEvidence{Method: r.Method, Path: path, Route: op.Route.Path}}
	writeRouteAnswer(w, r, ph, op, a.call(r.Context(), tool.Call{Name: op.Tool, Args: req.Arguments}, req))
}

// noPackageAPI is the 404 for a package that serves no HTTP API (or no
// package at all): it lists the package APIs there are.
func noPackageAPI(w http.ResponseWriter, r *http.Request, wd *world.World, name string) {
	var have []string
	for _, n := range wd.PackageList {
		if wd.Packages[n].HTTP != nil {
			have = append(have, HTTPPath(n))
		}
	}
	why := "it has no such package"
	if wd.Packages[name] != nil {
		why = "no operation of that package declares http:"
	}
	list := "none (declare http: on an operation)"
	if len(have) > 0 {
		list = strings.Join(have, ", ")
	}
	writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("%s %s: this world serves no HTTP API for %q (%s); the package APIs are %s", r.Method, r.URL.Path, name, why, list))
}

// noRoute answers a request that no route of the package takes: the
// route list (GET on the base URL), 405 with Allow when the path has
// routes of other methods, else 404 naming the closest route.
func (a *worldAPI) noRoute(w http.ResponseWriter, r *http.Request, pkg *world.Package, segs, allow []string, rest string) {
	ph := pkg.HTTP
	path := "/" + strings.Join(segs, "/")
	switch {
	case len(segs) == 0 && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		a.serveRouteList(w, r, pkg)
	case len(allow) > 0:
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writePackageError(w, ph, http.StatusMethodNotAllowed, &world.ErrorEnvelope{Code: CodeMethod,
			Message: fmt.Sprintf("%s %s: the route allows %s", r.Method, path, strings.Join(allow, ", "))})
	default:
		msg := fmt.Sprintf("no route %s %s", r.Method, path)
		if c := ph.Closest(r.Method, segs); c != nil {
			msg += fmt.Sprintf("; the closest is %s %s (%s)", c.Route.Method, c.Route.Path, c.Key)
		}
		msg += "; GET " + strings.TrimSuffix(r.URL.Path[:len(r.URL.Path)-len(rest)], "/") + "/" + pkg.Name + " lists every route"
		writePackageError(w, ph, http.StatusNotFound, &world.ErrorEnvelope{Code: CodeNoRoute, Message: msg})
	}
}

// bearerActor is the actor whose token the request carries, when the
// package has tokens (else ""); false when it answered 401.
func bearerActor(w http.ResponseWriter, r *http.Request, pkg *world.Package, path string) (string, bool) {
	ph := pkg.HTTP
	if ph.Tokens == nil {
		return "", true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	actor := ph.Tokens[strings.TrimSpace(tok)]
	if ok && actor != "" {
		return actor, true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="`+pkg.Name+`"`)
	why := "no bearer token"
	if ok {
		why = "a bearer token this package does not know"
	}
	writePackageError(w, ph, http.StatusUnauthorized, &world.ErrorEnvelope{Code: CodeUnauthenticated,
		Message: fmt.Sprintf("%s %s: the request carries %s (Authorization: Bearer TOKEN, with a token of http.tokens)", r.Method, path, why)})
	return "", false
}

// writeRouteAnswer writes the world's response to a route's request.
func writeRouteAnswer(w http.ResponseWriter, r *http.Request, ph *world.PackageHTTP, op *world.Operation, resp *world.Response) {
	status := ph.Status(op, resp)
	if resp.Error != nil {
		if resp.Error.Retryable {
			w.Header().Set("Retry-After", strconv.Itoa(ph.RetryAfter))
		}
		writePackageError(w, ph, status, resp.Error)
		return
	}
	if resp.Receipt {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if status == http.StatusNoContent || r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	if resp.Raw != "" {
		writeJSON(w, status, []byte(resp.Raw))
		return
	}
	writeValue(w, status, resp.Output)
}

// serveRouteList answers GET on a package's base URL: its routes.
func (a *worldAPI) serveRouteList(w http.ResponseWriter, r *http.Request, pkg *world.Package) {
	routes := make([]map[string]any, 0, len(pkg.HTTP.Routes))
	for _, op := range pkg.HTTP.Routes {
		routes = append(routes, map[string]any{"method": op.Route.Method, "path": op.Route.Path, "operation": op.Key, "tool": op.Tool})
	}
	out := map[string]any{"package": pkg.Name, "base_url": "http://" + r.Host + strings.TrimSuffix(r.URL.Path, "/"), "routes": routes}
	if pkg.HTTP.Env != "" {
		out["env"] = pkg.HTTP.Env
	}
	writeValue(w, http.StatusOK, out)
}

func writePackageError(w http.ResponseWriter, ph *world.PackageHTTP, status int, e *world.ErrorEnvelope) {
	writeValue(w, status, ph.ErrorValue(e, status))
}

// restSegments are the path segments after /http/, each unescaped on its
// own (a parameter may hold an escaped /). The prefix before them (the
// case's, /http/) has no escapes: its segments count the same escaped.
func restSegments(r *http.Request, rest string) []string {
	head := strings.Count(r.URL.Path[:len(r.URL.Path)-len(rest)], "/")
	esc := strings.Split(r.URL.EscapedPath(), "/")
	if head > len(esc) {
		return strings.Split(rest, "/")
	}
	out := esc[head:]
	for i, s := range out {
		if u, err := url.PathUnescape(s); err == nil {
			out[i] = u
		}
	}
	return out
}

// requestArgs merges a request into an operation's arguments: path
// parameters, the route's headers, the query, the JSON body. An argument
// given twice must have one value; text is the arguments as JSON.
func requestArgs(w http.ResponseWriter, r *http.Request, op *world.Operation, params map[string]string) (map[string]any, string, error) {
	args := map[string]any{}
	from := map[string]string{}
	set := func(k string, v any, src string) error {
		if old, ok := args[k]; ok && !value.Equal(old, v) {
			return fmt.Errorf("argument %q is %s in the %s and %s in the %s; give it once, or the same value", k, value.Canonical(old), from[k], value.Canonical(v), src)
		}
		args[k], from[k] = v, src
		return nil
	}
	for _, name := range op.Route.Params {
		if err := set(name, op.Coerce(name, []string{params[name]}), "path"); err != nil {
			return nil, "", err
		}
	}
	for _, h := range slices.Sorted(maps.Keys(op.Route.Headers)) {
		if v := r.Header.Values(h); len(v) > 0 {
			arg := op.Route.Headers[h]
			if err := set(arg, op.Coerce(arg, v), "header "+h); err != nil {
				return nil, "", err
			}
		}
	}
	q := r.URL.Query()
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if err := set(k, op.Coerce(k, q[k]), "query"); err != nil {
			return nil, "", err
		}
	}
	in := bufs.Get().(*bytes.Buffer)
	in.Reset()
	defer bufs.Put(in)
	if _, err := in.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		return nil, "", fmt.Errorf("reading the body: %w", err)
	}
	if body := bytes.TrimSpace(in.Bytes()); len(body) > 0 {
		v, err := value.Parse(body)
		if err != nil {
			return nil, "", fmt.Errorf("the body is not JSON: %w", err)
		}
		if op.Route.Body != "" {
			if err := set(op.Route.Body, v, "body"); err != nil {
				return nil, "", err
			}
		} else {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, "", fmt.Errorf("the body must be a JSON object of arguments, not %s (or the route names the argument that holds it, http.body)", value.TypeName(v))
			}
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if err := set(k, m[k], "body"); err != nil {
					return nil, "", err
				}
			}
		}
	}
	return args, value.Canonical(args), nil
}
