package toolserver

import (
	"bytes"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// scanCall reads the body of a tools/call for the fast path, in one pass
// and without reflection (encoding/json's Unmarshal of the two structs
// was two thirds of the fast path's own work): the members mcpCallRequest
// and requestMeta name, each value's bytes as encoding/json's RawMessage
// would hold them. It is stricter than encoding/json and says false,
// sending the request to go-sdk, for anything unusual: a key or string
// it would unescape, a key that differs from a known one only in case
// (encoding/json matches those), a known key twice, a known member of
// the wrong JSON type, nesting deeper than maxScanDepth, text after the
// object. Whatever it accepts, json.Unmarshal accepts and reads the same
// (FuzzScanCall).
func scanCall(b []byte, req *mcpCallRequest, meta *requestMeta) bool {
	i, ok := scanKnown(b, value.SkipSpace(b, 0), topKeys, func(k int, val []byte) (ok bool) {
		switch k {
		case 0:
			req.JSONRPC, ok = plainString(val)
			return ok
		case 1:
			req.ID = val
		case 2:
			req.Method, ok = plainString(val)
			return ok
		case 3:
			return scanParams(val, req, meta)
		}
		return true
	})
	return ok && value.SkipSpace(b, i) == len(b)
}

var (
	topKeys   = []string{"jsonrpc", "id", "method", "params"}
	paramKeys = []string{"name", "arguments", "_meta", "task", "inputResponses", "requestState"}
	metaKeys  = []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel", "progressToken"}
)

func scanParams(b []byte, req *mcpCallRequest, meta *requestMeta) bool {
	_, ok := scanKnown(b, 0, paramKeys, func(k int, val []byte) (ok bool) {
		switch k {
		case 0:
			req.Params.Name, ok = plainString(val)
			return ok
		case 1:
			req.Params.Arguments = val
		case 2:
			req.Params.Meta = val
			return scanMeta(val, meta)
		default: // task, inputResponses, requestState: go-sdk's
			return false
		}
		return true
	})
	return ok
}

func scanMeta(b []byte, meta *requestMeta) bool {
	_, ok := scanKnown(b, 0, metaKeys, func(k int, val []byte) (ok bool) {
		switch k {
		case 0:
			meta.ProtocolVersion, ok = plainString(val)
		case 1:
			meta.ClientCapabilities, ok = val, true
		case 2:
			meta.ClientInfo, ok = val, true
		case 3:
			meta.LogLevel, ok = plainString(val)
		case 4:
			meta.ProgressToken, ok = val, true
		}
		return ok
	})
	return ok
}

// scanKnown reads the object at b[i:], calling set with each member whose
// key is one of keys (by its index); a member of another key is skipped,
// as encoding/json skips it, but a known key twice, or a key that equals
// a known one only when case is ignored, says false.
func scanKnown(b []byte, i int, keys []string, set func(k int, val []byte) bool) (int, bool) {
	var seen uint8
	return members(b, i, func(key, val []byte) bool {
		switch k := knownKey(key, keys); {
		case k == -1 || k < len(keys) && seen&(1<<k) != 0:
			return false
		case k == len(keys):
			return true
		default:
			seen |= 1 << k
			return set(k, val)
		}
	})
}

// knownKey is key's index in keys, len(keys) for a key none of them
// equals in any case, or -1 for one that equals a known key only when
// case is ignored.
func knownKey(key []byte, keys []string) int {
	for i, k := range keys {
		if string(key) == k {
			return i
		}
	}
	for _, k := range keys {
		if bytes.EqualFold(key, []byte(k)) { // Unicode folding, as encoding/json's

			return -1
		}
	}
	return len(keys)
}

// plainString is the JSON string val when it has no escapes and is valid
// UTF-8 (encoding/json would change either).
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 || !utf8.Valid(val) {
		return "", false
	}
	return string(val[1 : len(val)-1]), true
}

// maxScanDepth bounds the nesting scanCall reads; deeper goes to go-sdk.
const maxScanDepth = 64

// members reads the object at b[i:] ('{' first), calling f with each
// member's key (unescaped keys only) and value (its bytes); it returns
// where the object ends.
func members(b []byte, i int, f func(key, val []byte) bool) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	return value.ScanJSON(b, i, maxScanDepth, f)
}
