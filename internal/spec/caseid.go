package spec

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
)

// A case's id is how its URLs (/cases/ID/ in an agent.command run) and
// lists of cases name it: the same whatever else runs (--filter, --shard,
// --last-failed, a folder or one file), since it is made of the case alone.
//
//	ID   = SLUG "-" HEX
//	SLUG = the case's name in lower case, each run of characters other
//	       than a-z and 0-9 one '-', none at either end, cut to at most
//	       MaxSlug bytes (then no '-' at the end); "case" when nothing is left
//	HEX  = the first 8 hex digits of the SHA-256 of SuitePath, a NUL byte
//	       and the case's name
//
// so "Refund a late order!" of suites/shop.dryfire.yaml is
// "refund-a-late-or-" cut to "refund-a-late-or" and its digits:
// refund-a-late-or-8736852f. Two cases of one run with the same id (the
// same slug and the same 8 digits: one pair in some 4 billion) both take
// more digits, as many as they need to differ (CaseIDs): which ones is
// decided by the cases loaded alone, not by what is selected.

// MaxSlug bounds the name part of a case id, so that an id stays short
// (crewai names an MCP tool after its server's URL, and tool names are
// at most 64 characters for most APIs).
const MaxSlug = 16

// idDigits is how many hex digits of the hash an id has.
const idDigits = 8

// CaseID is the id of case name of the suite at suitePath (SuitePath).
func CaseID(suitePath, name string) string {
	sum := caseSum(suitePath, name)
	return slug(name) + "-" + hex.EncodeToString(sum[:idDigits/2])
}

func caseSum(suitePath, name string) [sha256.Size]byte {
	return sha256.Sum256([]byte(suitePath + "\x00" + name))
}

// slug is a name made URL-safe and short (see CaseID).
func slug(name string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(name) && b.Len() < MaxSlug; i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			dash = b.Len() > 0
			continue
		}
		if dash {
			if b.Len()+1 >= MaxSlug {
				break
			}
			b.WriteByte('-')
			dash = false
		}
		b.WriteByte(c)
	}
	if b.Len() == 0 {
		return "case"
	}
	return b.String()
}

// SuitePath is the suite's path as case ids hash it: relative to its
// project root, with '/' between its parts (the path as loaded when it
// is not inside the root).
func (s *Suite) SuitePath() string {
	p := s.File
	root, err1 := filepath.Abs(s.ProjectRoot())
	file, err2 := filepath.Abs(s.File)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			p = rel
		}
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// CaseIDs are the ids of the cases of a run's suites, collisions
// resolved (see CaseID).
type CaseIDs struct {
	paths []string
	// longer are the ids of the cases (by suite, then case) that share
	// their CaseID with another: usually none.
	longer map[[2]int]string
}

// NewCaseIDs works out the ids of every case of suites, once for a run.
// It keeps nothing per case but the ids that collided.
func NewCaseIDs(suites []*Suite) *CaseIDs {
	ids := &CaseIDs{paths: make([]string, len(suites))}
	n := 0
	for i, s := range suites {
		ids.paths[i] = s.SuitePath()
		n += s.Len()
	}
	if n < 2 {
		return ids
	}
	// A fingerprint of each id with its case; equal fingerprints are
	// then compared by their ids.
	type fp struct {
		h     uint64
		suite int32
		k     int32
	}
	fps := make([]fp, 0, n)
	for i, s := range suites {
		for k := range s.Len() {
			h := fnv.New64a()
			h.Write([]byte(ids.id(i, s.CaseName(k))))
			fps = append(fps, fp{h: h.Sum64(), suite: int32(i), k: int32(k)})
		}
	}
	slices.SortFunc(fps, func(a, b fp) int { return cmp.Compare(a.h, b.h) })
	for lo := 0; lo < len(fps); {
		hi := lo + 1
		for hi < len(fps) && fps[hi].h == fps[lo].h {
			hi++
		}
		if hi-lo > 1 {
			groups := map[string][][2]int{}
			for _, f := range fps[lo:hi] {
				at := [2]int{int(f.suite), int(f.k)}
				id := ids.id(at[0], suites[at[0]].CaseName(at[1]))
				groups[id] = append(groups[id], at)
			}
			for _, g := range groups {
				if len(g) > 1 {
					ids.lengthen(suites, g)
				}
			}
		}
		lo = hi
	}
	return ids
}

func (ids *CaseIDs) id(suite int, name string) string {
	return CaseID(ids.paths[suite], name)
}

// lengthen gives cases that share an id as many more digits as they
// need to differ.
func (ids *CaseIDs) lengthen(suites []*Suite, g [][2]int) {
	if ids.longer == nil {
		ids.longer = map[[2]int]string{}
	}
	sums := make([]string, len(g))
	for i, at := range g {
		s := caseSum(ids.paths[at[0]], suites[at[0]].CaseName(at[1]))
		sums[i] = hex.EncodeToString(s[:])
	}
	for d := idDigits + 1; d <= 2*sha256.Size; d++ {
		seen := map[string]bool{}
		for _, s := range sums {
			seen[s[:d]] = true
		}
		if len(seen) == len(sums) || d == 2*sha256.Size {
			for i, at := range g {
				ids.longer[at] = slug(suites[at[0]].CaseName(at[1])) + "-" + sums[i][:d]
			}
			return
		}
	}
}

// ID is the id of case k of suite i (in the order NewCaseIDs had them).
func (ids *CaseIDs) ID(suite int, k int, name string) string {
	if id, ok := ids.longer[[2]int{suite, k}]; ok {
		return id
	}
	return ids.id(suite, name)
}
