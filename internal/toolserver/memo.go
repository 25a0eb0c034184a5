package toolserver

import (
	"bytes"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The answers of pure tools, kept by their exact arguments.
//
// A tool whose rules are all pure (mock.Set.Pure: no sequence, no
// delay_ms, no impl) answers the same arguments with the same result,
// whatever came before. On a scope that keeps no record (serve's), its
// answer to the exact argument bytes it answered once is kept, and a
// call with those bytes again is answered from it without parsing or
// matching the arguments: the same result, and over HTTP the same bytes,
// as answering afresh. The memo is bounded in entries and in the size
// of what it keeps; once full it keeps nothing more (the calls after
// are answered afresh).

const (
	memoEntries = 1024
	memoKey     = 2 << 10 // longest tool name and arguments kept
	memoAnswer  = 8 << 10 // longest result content kept
)

type memo struct {
	mu sync.RWMutex
	m  map[string]*memoEntry // tool name, 0, argument bytes
}

type memoEntry struct {
	res  tool.Result
	http []byte // the POST /tools/{name} body; nil until one is written
}

// memoKeys holds the buffers keys are built in.
var memoKeys = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// memoOn reports whether the scope keeps answers: it keeps no record
// and answers by its mocks.
func (s *Scope) memoOn() bool { return s.noRecords && s.world == nil && s.upstream == nil }

// lookup returns the kept answer to tool name with these argument bytes,
// or nil.
func (m *memo) lookup(name string, args []byte) *memoEntry {
	if len(name)+1+len(args) > memoKey {
		return nil
	}
	b := memoKeys.Get().(*bytes.Buffer)
	b.Reset()
	b.WriteString(name)
	b.WriteByte(0)
	b.Write(args)
	m.mu.RLock()
	e := m.m[string(b.Bytes())]
	m.mu.RUnlock()
	memoKeys.Put(b)
	return e
}

// keep keeps res as the answer to tool name with these argument bytes,
// when there is room; http is its POST /tools body (nil: none yet).
func (m *memo) keep(name string, args []byte, res tool.Result, http []byte) {
	if len(name)+1+len(args) > memoKey || len(res.Content)+len(res.Blocks) > memoAnswer {
		return
	}
	key := name + "\x00" + string(args)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]*memoEntry{}
	}
	if e := m.m[key]; e != nil {
		if e.http == nil && http != nil {
			// Kept from MCP first: a new entry, as entries are read
			// without the lock.
			m.m[key] = &memoEntry{res: e.res, http: bytes.Clone(http)}
		}
		return
	}
	if len(m.m) >= memoEntries {
		return
	}
	m.m[key] = &memoEntry{res: res, http: bytes.Clone(http)}
}
