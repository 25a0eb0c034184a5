package toolserver

import (
	"cmp"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// sessions are a scope's MCP sessions and the mock state of each (see
// Scope's state rules): the state of every session that made calls, the
// shared state of calls without one, and the sessions go-sdk opened over
// HTTP, by id, with their idle timeout and bound. A world scope has no
// mock state.
type sessions struct {
	set   *mock.Set
	impl  mock.Impl
	label string

	mu     sync.Mutex
	gen    uint64                        // bumped by reset
	shared *state                        // nil for a world scope
	states map[*mcp.ServerSession]*state // MCP sessions that made calls
	byID   map[string]*httpSession       // HTTP sessions, by Mcp-Session-Id
	// live is byID for the hot path's lookups, which take no lock; it is
	// written with byID, under mu.
	live     sync.Map
	watched  map[*mcp.ServerSession]bool // sessions whose end is awaited
	expiring bool                        // the idle-session sweeper runs
	idle     time.Duration               // idle HTTP sessions end after this; <= 0 never
	max      int                         // the HTTP sessions open at once (< 0 no bound)
}

// state is one line of mock state: a sequence position per rule.
type state struct {
	gen  uint64
	sess *mock.Session
}

func (s *sessions) init(o ScopeOptions) {
	s.idle, s.max = cmp.Or(o.SessionTimeout, DefaultSessionTimeout), cmp.Or(o.MaxSessions, DefaultMaxSessions)
	s.states, s.byID, s.watched = map[*mcp.ServerSession]*state{}, map[string]*httpSession{}, map[*mcp.ServerSession]bool{}
}

// mocks gives the sessions mock state: set's rules, answered for case c
// (nil: the suite's own), impl: rules by impl.
func (s *sessions) mocks(set *mock.Set, impl mock.Impl, c *spec.Case) {
	s.set, s.impl = set, impl
	if c != nil {
		s.label = c.Name
	}
	s.shared = s.newState()
}

func (s *sessions) newState() *state {
	ms := mock.NewSession(s.set, s.impl)
	ms.Label = s.label
	return &state{gen: s.gen, sess: ms}
}

// reset starts every line of mock state again: the shared one now, each
// session's at its next call.
func (s *sessions) reset() {
	s.mu.Lock()
	s.gen++
	if s.shared != nil {
		s.shared = s.newState()
	}
	s.mu.Unlock()
}

// mockOf is the mock state of an MCP session's calls (ss nil: the shared
// state), made on its first call and again after a reset.
func (s *sessions) mockOf(ss *mcp.ServerSession) *mock.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss == nil {
		return s.shared.sess
	}
	st := s.states[ss]
	if st == nil || st.gen != s.gen {
		st = s.newState()
		s.states[ss] = st
		s.watch(ss)
	}
	return st.sess
}

// httpSession is an MCP session go-sdk opened over HTTP, and when its
// client last sent a request (Unix nanoseconds).
type httpSession struct {
	ss   *mcp.ServerSession
	last atomic.Int64
	// logLevel is the level the client set with logging/setLevel ("":
	// none yet), for the fast path, which sends a call's log messages
	// itself.
	logLevel atomic.Pointer[string]
}

// register notes a session go-sdk opened over HTTP by its id, for the
// tools/call fast path and the idle timeout.
func (s *sessions) register(ss *mcp.ServerSession) {
	id := ss.ID()
	if id == "" {
		return
	}
	hs := &httpSession{ss: ss}
	hs.touch()
	s.mu.Lock()
	if s.max > 0 && len(s.byID) >= s.max {
		// At the bound: the session idle the longest ends, as if idle
		// past the timeout (its client gets 404 and may open another).
		oldID, oldest := "", int64(math.MaxInt64)
		for sid, o := range s.byID {
			if l := o.last.Load(); l < oldest || l == oldest && sid < oldID {
				oldID, oldest = sid, l
			}
		}
		defer s.byID[oldID].ss.Close() // once the lock is let go
		delete(s.byID, oldID)
		s.live.Delete(oldID)
	}
	s.byID[id] = hs
	s.live.Store(id, hs)
	s.watch(ss)
	if s.idle > 0 && !s.expiring {
		s.expiring = true
		go s.expireIdle()
	}
	s.mu.Unlock()
}

// get returns the HTTP session with that id, or nil, without a lock
// (the caller notes its client's activity: touch).
func (s *sessions) get(id string) *httpSession {
	if v, ok := s.live.Load(id); ok {
		return v.(*httpSession)
	}
	return nil
}

// setLogLevel notes the logging level a session's client set.
func (s *sessions) setLogLevel(sess mcp.Session, level string) {
	ss, ok := sess.(*mcp.ServerSession)
	if !ok || ss == nil || ss.ID() == "" {
		return
	}
	s.mu.Lock()
	hs := s.byID[ss.ID()]
	s.mu.Unlock()
	if hs != nil && hs.ss == ss {
		hs.logLevel.Store(&level)
	}
}

// touch notes that the session's client has just been active.
func (hs *httpSession) touch() { hs.last.Store(time.Now().UnixNano()) }

// expireIdle ends the HTTP sessions idle for longer than the timeout,
// checking a few times per timeout, until no session is left (go-sdk's
// own idle timer cannot be used: the fast path answers a session's calls
// without go-sdk seeing them). It is started again by the next session.
func (s *sessions) expireIdle() {
	every := min(max(s.idle/4, time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for range t.C {
		cut := time.Now().Add(-s.idle).UnixNano()
		var idle []*mcp.ServerSession
		s.mu.Lock()
		for id, hs := range s.byID {
			if hs.last.Load() <= cut {
				idle = append(idle, hs.ss)
				delete(s.byID, id)
				s.live.Delete(id)
			}
		}
		done := len(s.byID) == 0
		if done {
			s.expiring = false
		}
		s.mu.Unlock()
		for _, ss := range idle {
			ss.Close()
		}
		if done {
			return
		}
	}
}

// watch forgets a session, and its state, when it ends. s.mu is held.
func (s *sessions) watch(ss *mcp.ServerSession) {
	if s.watched[ss] {
		return
	}
	s.watched[ss] = true
	go func() {
		ss.Wait()
		s.mu.Lock()
		delete(s.states, ss)
		delete(s.watched, ss)
		if id := ss.ID(); id != "" && s.byID[id] != nil && s.byID[id].ss == ss {
			delete(s.byID, id)
			s.live.Delete(id)
		}
		s.mu.Unlock()
	}()
}
