package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
)

// The routes of serve's sessions (sessions.go): POST /sessions,
// /sessions/ID/..., OpenEnv's WebSocket (ws.go), /mcp a session each.

// ServeHTTP serves the session routes, and hands every other request to
// next (the server's own world): POST /sessions, /sessions/ID/reset,
// step and state, DELETE /sessions/ID, every other /sessions/ID/ route
// to the session's binding, GET /ws, and /mcp per session.
func (s *Sessions) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if path != "/sessions" && !strings.HasPrefix(path, "/sessions/") && path != "/ws" && (path != "/mcp" || !s.perMCP) {
			next.ServeHTTP(w, r)
			return
		}
		if !toolserver.Allowed(w, r) {
			return
		}
		switch path {
		case "/sessions", "/sessions/":
			if !allow(w, r, http.MethodPost) {
				return
			}
			respond(w, r, http.StatusCreated, func(body []byte) ([]byte, error) {
				st, aerr := parseSessionStart(body, "POST /sessions", createKeys)
				if aerr != nil {
					return nil, aerr
				}
				ss, aerr := s.create(st)
				if aerr != nil {
					return nil, aerr
				}
				url, ans := ss.run.URL(), ss.about() // the session and its URLs
				ans["url"], ans["mcp_url"], ans["tools_url"], ans["ops_url"], ans["world_url"] = url, url+"/mcp", url+"/tools", url+"/ops", url+"/world"
				return marshal(ans), nil
			})
		case "/ws":
			s.serveWS(w, r)
		case "/mcp":
			s.serveMCP(w, r, next)
		default:
			s.serveSession(w, r, path[len("/sessions/"):])
		}
	})
}

// serveSession serves /sessions/ID/...: the OpenEnv routes, DELETE, and
// the session's binding.
func (s *Sessions) serveSession(w http.ResponseWriter, r *http.Request, rest string) {
	id, sub, _ := strings.Cut(rest, "/")
	ss, aerr := s.lookup(id)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	route := func(method string, f func([]byte) ([]byte, *apiError)) {
		if !allow(w, r, method) {
			return
		}
		respond(w, r, http.StatusOK, func(body []byte) ([]byte, error) {
			ans, aerr := f(body)
			if aerr != nil {
				return nil, aerr
			}
			return ans, nil
		})
	}
	switch sub {
	case "":
		if !allow(w, r, http.MethodDelete) {
			return
		}
		s.end(ss, "it was deleted (DELETE /sessions/ID)")
		w.WriteHeader(http.StatusNoContent)
	case "reset":
		route(http.MethodPost, func(body []byte) ([]byte, *apiError) { return s.reset(ss, body) })
	case "step":
		route(http.MethodPost, func(body []byte) ([]byte, *apiError) { return s.step(ss, body) })
	case "state":
		route(http.MethodGet, func([]byte) ([]byte, *apiError) { return s.state(ss), nil })
	default:
		s.host.ServeHTTP(w, r)
	}
}

// serveMCP gives each MCP session opened at /mcp a session of its own:
// an initialize without a session starts one and is answered by its
// drill's MCP endpoint, whose Mcp-Session-Id then routes the session's
// requests there (its id in the Dryfire-Session-Id header too). A
// request of no session (2026-07-28, or without Mcp-Session-Id) is the
// server's own world's.
func (s *Sessions) serveMCP(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		s.mu.Lock()
		ss := s.byMCP[sid]
		if ss != nil {
			ss.used.Store(s.now().UnixNano())
		}
		s.mu.Unlock()
		if ss == nil {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Dryfire-Session-Id", ss.id)
		s.host.ServeHTTP(w, withPath(r, "/sessions/"+ss.id+"/mcp"))
		if r.Method == http.MethodDelete {
			s.end(ss, "its MCP session was deleted")
		}
		return
	}
	if r.Method != http.MethodPost {
		next.ServeHTTP(w, r)
		return
	}
	body, aerr := readBody(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !isInitialize(body) {
		next.ServeHTTP(w, r)
		return
	}
	ss, aerr := s.create(&sessionStart{})
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.Header().Set("Dryfire-Session-Id", ss.id)
	s.host.ServeHTTP(w, withPath(r, "/sessions/"+ss.id+"/mcp"))
	if mid := w.Header().Get("Mcp-Session-Id"); mid != "" { // the answer's, read once it is written
		s.mu.Lock()
		if s.byID[ss.id] == ss {
			ss.mcpID = mid
			s.byMCP[mid] = ss
		}
		s.mu.Unlock()
	} else {
		s.end(ss, "its initialize was not answered with a session")
	}
}

func withPath(r *http.Request, path string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	return r2
}

// isInitialize says whether a JSON-RPC body is an initialize request
// (alone, or in a batch).
func isInitialize(body []byte) bool {
	type message struct {
		Method string `json:"method"`
	}
	var one message
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []message
	return json.Unmarshal(body, &batch) == nil && slices.Contains(batch, message{"initialize"})
}

// RefuseModel answers every model request with err, in each API's own
// error shape (status 400): the model routes of `dryfire serve --case`
// when the case's endpoint could not be made, so that the agent is told
// why.
func RefuseModel(err error) http.Handler { return modelserver.Refuse(err) }
