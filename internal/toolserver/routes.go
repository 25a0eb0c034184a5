package toolserver

import (
	"net/http"
	"strings"
)

// Route is one route of a scope, relative to the scope's prefix (the root,
// or /cases/{id}): the one table the server routes by and that its 404
// answers and `dryfire serve --help` list.
type Route struct {
	// Method is GET (which answers HEAD too) or POST; empty for /mcp,
	// which answers POST, GET and DELETE itself.
	Method string
	// Path is as listed: {name} stands for the rest of the path.
	Path string
	// Doc says what it answers, in a few words.
	Doc string
	// World marks a world scope's route; a scope of mocks answers it 404,
	// saying that it serves no world.
	World bool
}

// route is a Route with how it matches and who answers it.
type route struct {
	Route
	prefix string // set: the route is every path under prefix, the rest goes to serve
	serve  func(sc *Scope, w http.ResponseWriter, r *http.Request, rest string)
}

// routes are matched in order; the first that matches answers.
var routes = []route{
	{Route: Route{"", "/mcp", "MCP, streamable HTTP", false},
		serve: func(sc *Scope, w http.ResponseWriter, r *http.Request, _ string) { mcpHandler{sc}.ServeHTTP(w, r) }},
	{Route: Route{"GET", "/tools", "the tools with their input schemas", false},
		serve: func(sc *Scope, w http.ResponseWriter, _ *http.Request, _ string) {
			writeJSON(w, http.StatusOK, sc.listBody())
		}},
	{Route: Route{"POST", "/tools/{name}", `JSON arguments -> {"content", "is_error"}`, false}, prefix: "/tools/",
		serve: (*Scope).serveCall},
	{Route: Route{"POST", "/reset", "sequences (or the world) back to the start", false},
		serve: func(sc *Scope, w http.ResponseWriter, _ *http.Request, _ string) {
			sc.Reset()
			writeJSON(w, http.StatusOK, []byte(`{"reset":true}`))
		}},
	{Route: Route{"POST", "/ops/{package}/{operation}", `{"arguments", "actorId", "idempotencyKey"}`, true}, prefix: "/ops/",
		serve: onWorld((*worldAPI).serveOp)},
	{Route: Route{"GET", "/http", "the packages with an HTTP API", true},
		serve: onWorld((*worldAPI).serveHTTPIndex)},
	{Route: Route{"", "/http/{package}/{path}", "a package's own routes (http:)", true}, prefix: "/http/",
		serve: onWorld((*worldAPI).serveHTTPAPI)},
	{Route: Route{"GET", "/world", "the world, seed, build hash, actor, clock", true},
		serve: onWorld((*worldAPI).serveWorldInfo)},
	{Route: Route{"GET", "/world/build", "the derived build (canonical JSON) and seed", true},
		serve: onWorld((*worldAPI).serveBuild)},
	{Route: Route{"POST", "/world/reset", "the whole world back to its start", true},
		serve: onWorld((*worldAPI).serveWorldReset)},
	{Route: Route{"POST", "/world/reset/{package}", "one package back to its start", true}, prefix: "/world/reset/",
		serve: onWorld((*worldAPI).servePackageReset)},
	{Route: Route{"GET", "/world/clock", `{"now": ...}`, true},
		serve: onWorld((*worldAPI).serveClock)},
	{Route: Route{"POST", "/world/clock/advance", `{"by": "10m"}: the virtual clock forward`, true},
		serve: onWorld((*worldAPI).serveAdvance)},
	{Route: Route{"GET", "/world/state", "package -> collection -> value", true},
		serve: onWorld((*worldAPI).serveState)},
	{Route: Route{"GET", "/world/evidence", `[?since=N] {"evidence", "events"}`, true},
		serve: onWorld((*worldAPI).serveEvidence)},
}

// Routes are the routes of every scope, in the order they are matched
// (the model routes, served when the server has a model handler, are the
// model endpoint's).
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		out[i] = rt.Route
	}
	return out
}

// match reports whether the route answers path, and the rest of a prefix
// route's path.
func (rt *route) match(path string) (string, bool) {
	if rt.prefix != "" {
		return strings.CutPrefix(path, rt.prefix)
	}
	return "", path == rt.Path
}

// allows reports whether the route answers r's method.
func (rt *route) allows(r *http.Request) bool {
	return rt.Method == "" || r.Method == rt.Method || rt.Method == http.MethodGet && r.Method == http.MethodHead
}

// routeList names the routes a scope really serves under prefix, for a
// 404: a world scope's routes only on a world scope, the model routes
// only when the server has a model handler. only, when set, keeps the
// routes whose path starts with it.
func (s *Server) routeList(sc *Scope, prefix, only string) string {
	var b strings.Builder
	add := func(method, path string) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if method != "" {
			b.WriteString(method + " ")
		}
		b.WriteString(prefix + path)
	}
	for _, rt := range routes {
		if (!rt.World || sc.world != nil) && strings.HasPrefix(rt.Path, only) {
			add(rt.Method, rt.Path)
		}
	}
	if s.modelOf(sc) != nil && only == "" {
		for _, p := range s.modelRoutes {
			add(http.MethodPost, p)
		}
	}
	return b.String()
}
