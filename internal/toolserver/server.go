// Package toolserver serves a suite's tools to agents dryfire does not run
// itself: over MCP (the official go-sdk, both protocol eras, stdio and
// streamable HTTP) and over plain HTTP, answered by the same mocks the
// built-in loop uses, with the same text.
//
// A Scope is the tool world of one case (or of the suite): its rules,
// state and merged record of calls. A Server is an http.Handler that
// hosts a default scope at the root paths and any number of case scopes
// under /cases/{id}/, plus an optional handler for the model routes
// (/v1/...). The routes of a scope are one table, routes.go; a world
// scope (ScopeOptions.World) adds the world's own (/ops and /world).
//
// The same paths under /cases/{id}/ reach the scope added with that ID.
package toolserver

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Options configure a Server.
type Options struct {
	// Model serves the model routes (/v1/..., at the root and under each
	// case prefix, with the prefix stripped) of every scope without a
	// model handler of its own (ScopeOptions.Model). With neither, they
	// are answered 404 with a JSON error saying no model endpoint is
	// configured.
	Model http.Handler
	// ModelRoutes are the paths model handlers answer
	// (/v1/chat/completions, ...), for the 404 answer that lists what the
	// server serves.
	ModelRoutes []string
	// NoModelHint is added to the 404 answer of a model route when Model
	// is nil: how to get a model endpoint.
	NoModelHint string
	// Prefix is where added scopes are served, as /PREFIX/{id}/...; empty
	// means "/cases/". It starts and ends with '/'.
	Prefix string
}

// Server serves scopes over HTTP. It is an http.Handler.
type Server struct {
	root        *Scope
	model       http.Handler
	modelRoutes []string
	noModel     string
	prefix      string

	mu    sync.RWMutex
	cases map[string]*Scope
}

// New returns a Server whose root paths serve root (nil: none, and only
// /cases/{id}/ paths answer).
func New(root *Scope, opts Options) *Server {
	s := &Server{root: root, model: opts.Model, modelRoutes: opts.ModelRoutes, cases: map[string]*Scope{}, prefix: cmp.Or(opts.Prefix, "/cases/")}
	if opts.NoModelHint != "" {
		s.noModel = " (" + opts.NoModelHint + ")"
	}
	return s
}

// NoDate keeps net/http from writing a Date header on the answer: the
// wall clock is not to reach an agent (a framework that prints a refused
// answer's headers put it into the report; two runs differed).
func NoDate(w http.ResponseWriter) { w.Header()["Date"] = nil }

// Root is the scope served at the root paths; nil when there is none.
func (s *Server) Root() *Scope { return s.root }

// Add serves sc under /cases/{sc.ID()}/. The ID must be a non-empty URL
// path segment (letters, digits, '-', '_', '.'), not yet in use.
func (s *Server) Add(sc *Scope) error {
	id := sc.ID()
	if !validID(id) {
		return fmt.Errorf("scope id %q: want letters, digits, '-', '_' or '.'", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.cases[id]; dup {
		return fmt.Errorf("scope id %q is already served", id)
	}
	s.cases[id] = sc
	return nil
}

// Remove stops serving the scope with that ID, and ends its MCP sessions.
func (s *Server) Remove(id string) {
	s.mu.Lock()
	sc := s.cases[id]
	delete(s.cases, id)
	s.mu.Unlock()
	if sc != nil {
		sc.mcp.closeSessions()
	}
}

// Scope returns the scope served under /cases/{id}/, or nil.
func (s *Server) Scope(id string) *Scope {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cases[id]
}

// CloseSessions ends every MCP session of every scope, standalone SSE
// streams included: call it when shutting down, so that an
// http.Server's Shutdown does not wait for streams that never end.
func (s *Server) CloseSessions() {
	s.mu.RLock()
	all := slices.AppendSeq(make([]*Scope, 0, len(s.cases)+1), maps.Values(s.cases))
	s.mu.RUnlock()
	if s.root != nil {
		all = append(all, s.root)
	}
	for _, sc := range all {
		sc.mcp.closeSessions()
	}
}

func validID(id string) bool {
	if id == "" || id == "." || id == ".." {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// ServeHTTP routes a request to its scope and route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	NoDate(w)
	if !Allowed(w, r) {
		return
	}
	path := r.URL.Path
	sc := s.root
	prefix := ""
	if rest, ok := strings.CutPrefix(path, s.prefix); ok {
		id, sub, _ := strings.Cut(rest, "/")
		sc = s.Scope(id)
		if !s.reaches(w, r, sc) {
			return
		}
		if sc == nil {
			writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no case is served as %q", id))
			return
		}
		prefix, path = s.prefix+id, "/"+sub
	} else if !s.reaches(w, r, sc) {
		return
	}
	if sc == nil {
		writeError(w, http.StatusNotFound, "not_found", "nothing is served at the root; use "+s.prefix+"{id}/")
		return
	}
	model := s.modelOf(sc)
	if model != nil && isModelPath(path) {
		// Before the table, which has no /v1 route: the model's calls,
		// the most frequent, skip it.
		model.ServeHTTP(w, forModel(r, prefix, path))
		return
	}
	for i := range routes {
		rt := &routes[i]
		rest, ok := rt.match(path)
		if !ok {
			continue
		}
		if rt.World && sc.noWorld(w, r) {
			return
		}
		if !rt.allows(r) {
			methodNotAllowed(w, r, rt.Method)
			return
		}
		rt.serve(sc, w, r, rest)
		return
	}
	switch {
	case isModelPath(path): // and no model handler
		writeError(w, http.StatusNotFound, "not_found", "no model endpoint is configured on this server: "+r.Method+" "+r.URL.Path+s.noModel)
	case path == "/world" || strings.HasPrefix(path, "/world/"):
		if !sc.noWorld(w, r) {
			writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s; the world routes are %s", r.Method, r.URL.Path, s.routeList(sc, prefix, "/world")))
		}
	case model != nil && path == "/messages" && slices.Contains(s.modelRoutes, "/v1/messages"):
		// ANTHROPIC_BASE_URL is the root for the official Anthropic
		// SDKs, which add /v1/messages; the Vercel AI SDK's
		// @ai-sdk/anthropic reads it as a base that holds /v1 already
		// and adds /messages: both reach the endpoint.
		model.ServeHTTP(w, withPath(r, "/v1/messages"))
	case model != nil && slices.Contains(s.modelRoutes, "/v1"+path):
		writeError(w, http.StatusNotFound, "not_found", modelPathHint(r, prefix, path))
	default:
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s; this server has %s", r.Method, r.URL.Path, s.routeList(sc, prefix, "")))
	}
}

// modelOf is the handler of a scope's model routes: its own, else the
// server's; nil when there is neither.
func (s *Server) modelOf(sc *Scope) http.Handler { return cmp.Or(sc.model, s.model) }

// modelPathHint answers a model request sent without /v1 (a base URL
// missing it): the path to use, and the base URL the client wants.
func modelPathHint(r *http.Request, prefix, path string) string {
	base := "http://" + r.Host + prefix
	client := "an OpenAI SDK's base URL is " + base + "/v1"
	if path == "/messages" {
		client = "an Anthropic SDK's base URL is " + base + " (it adds /v1/messages itself)"
	}
	return fmt.Sprintf("no route %s %s; model requests go under /v1: %s %s/v1%s (%s)", r.Method, r.URL.Path, http.MethodPost, prefix, path, client)
}

// forModel is r for the model handler: the case prefix stripped (r
// itself when there is none).
func forModel(r *http.Request, prefix, path string) *http.Request {
	if prefix == "" {
		return r
	}
	return withPath(r, path)
}

// withPath is a shallow copy of r for another path.
func withPath(r *http.Request, path string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path = path
	u.RawPath = ""
	r2.URL = &u
	return r2
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, allow))
}

// Allowed is the DNS-rebinding protection of every route: a request that
// reached a loopback address must name a loopback host (the rule go-sdk
// applies to MCP, whose own check is turned off so that it runs once),
// and a request from a browser page (it has an Origin) must come from a
// page on localhost, 127.0.0.1 or [::1]. Requests without Origin, as
// every SDK and command-line client sends them, are fine. It writes the
// 403 itself.
func Allowed(w http.ResponseWriter, r *http.Request) bool {
	// A loopback Host is fine wherever the request arrived: the address
	// it reached is looked up only for another Host.
	if !isLoopback(r.Host) {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && localLoopback(la) {
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("host %q is not a loopback name; dryfire answers only localhost, 127.0.0.1 and [::1] here (DNS rebinding protection)", r.Host))
			return false
		}
	}
	if o := r.Header["Origin"]; len(o) > 0 {
		if u, err := url.Parse(o[0]); err != nil || u.Host == "" || !isLoopback(u.Host) {
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("origin %q is not a page on localhost, 127.0.0.1 or [::1] (DNS rebinding protection)", o[0]))
			return false
		}
	}
	return true
}

// localLoopback is isLoopback(la.String()), without making the string of
// a TCP address.
func localLoopback(la net.Addr) bool {
	if a, ok := la.(*net.TCPAddr); ok {
		return a.IP.IsLoopback()
	}
	return isLoopback(la.String())
}

// isLoopback reports whether addr (a host, or host:port) is localhost or
// a loopback IP.
func isLoopback(addr string) bool { return commonLoopback(addr) || parsedLoopback(addr) }

// parsedLoopback is isLoopback by parsing addr.
func parsedLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// commonLoopback reports, without parsing, whether addr is one of the
// loopback hosts clients usually name (127.0.0.1, localhost, [::1]), with
// or without a numeric port: what isLoopback's parse would say of them.
func commonLoopback(addr string) bool {
	host := addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && i < len(addr)-1 && len(addr)-i <= 6 {
		host = addr[:i]
		for j := i + 1; j < len(addr); j++ {
			if addr[j] < '0' || addr[j] > '9' {
				return false
			}
		}
	}
	switch host {
	case "127.0.0.1", "localhost", "[::1]":
		return true
	}
	return false
}

// isModelPath says whether a path is the model's (wire.IsModelPath).
var isModelPath = wire.IsModelPath
