package spec

import (
	"hash/maphash"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// checkCaseName refuses a case name holding a control character other
// than tab, newline and carriage return: the agent program's environment
// cannot hold a NUL (every case of the suite failed at run time), and
// XML 1.0 (a JUnit report) none of the others, which would name two cases
// alike. Tab, newline and carriage return are escaped where a name is
// printed; DEL and C1 controls too.
func (x *decoder) checkCaseName(name string, at *yaml.Node) {
	if i := strings.IndexFunc(name, badInName); i >= 0 {
		x.errorf(at, "case name %q holds the control character U+%04X: a case name may hold tab, newline and carriage return but no other C0 control (the agent's environment cannot hold a NUL, nor a JUnit report the others); remove it", name, name[i])
	}
}

func badInName(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' }

// A nameSet is where each case name of a suite was first written, for
// the duplicate check, in flat memory: the names one after another in one
// text, the line of each, and an open-addressed table of their hashes'
// places, so that a million names take about 40 bytes each (a map of
// strings takes about 70). A hash only finds a place: the name there is
// compared whole.
type nameSet struct {
	text  []byte
	ends  []int   // where each name ends in text (it starts where the one before ends)
	lines []int   // the line of each (virtual for a data file's row)
	slots []int32 // 1 + the index of a name, 0 for none; at most half full
}

var nameSeed = maphash.MakeSeed()

// collideNames makes every name hash alike (a test).
var collideNames bool

func hashName(name string) uint64 {
	if collideNames {
		return 0
	}
	return maphash.String(nameSeed, name)
}

// name is the text of the i-th name.
func (s *nameSet) name(i int) []byte {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.text[start:s.ends[i]]
}

// slot is the place of name in the table: where it is, or the free one
// it would take.
func (s *nameSet) slot(name string) int {
	mask := len(s.slots) - 1
	for i := int(hashName(name)) & mask; ; i = (i + 1) & mask {
		if j := s.slots[i]; j == 0 || string(s.name(int(j-1))) == name {
			return i
		}
	}
}

// line is the line where name was first written, if it was.
func (s *nameSet) line(name string) (int, bool) {
	if len(s.slots) == 0 {
		return 0, false
	}
	j := s.slots[s.slot(name)]
	if j == 0 {
		return 0, false
	}
	return s.lines[j-1], true
}

// add keeps name, which it does not hold, as first written at line.
func (s *nameSet) add(name string, line int) {
	if 2*(len(s.ends)+1) > len(s.slots) {
		s.grow()
	}
	s.text = append(s.text, name...)
	s.ends = append(s.ends, len(s.text))
	s.lines = append(s.lines, line)
	s.slots[s.slot(name)] = int32(len(s.ends))
}

func (s *nameSet) grow() {
	s.slots = make([]int32, max(64, 2*len(s.slots)))
	mask := len(s.slots) - 1
	for j := range s.ends {
		h := maphash.Bytes(nameSeed, s.name(j)) // as hashName of its text
		if collideNames {
			h = 0
		}
		i := int(h) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = int32(j + 1)
	}
}
