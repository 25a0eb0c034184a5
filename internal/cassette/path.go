package cassette

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// Dir is the directory, beside a suite, that holds its cassettes.
const Dir = "cassettes"

// maxSlug bounds the length of a case's file name (without extension).
const maxSlug = 60

// Slug is a case name as a file name: lower-case ASCII letters and digits,
// every run of anything else one '-', trimmed, at most 60 characters. A
// name with no letter or digit at all gives "case".
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			sep := dash && b.Len() > 0
			if sep && b.Len()+2 > maxSlug || b.Len()+1 > maxSlug {
				break
			}
			if sep {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "case"
	}
	return b.String()
}

// nameHash is 6 hex characters of the SHA-256 of a case name.
func nameHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:3])
}

// SuiteBase is a suite file's name without .dryfire.yaml (or .yml). A
// base that would leave cassettes/ ("." or "..", from a file named
// "...dryfire.yaml") is "suite" and a hash of the name instead.
func SuiteBase(suiteFile string) string {
	base := filepath.Base(suiteFile)
	out := strings.TrimSuffix(base, filepath.Ext(base))
	for _, ext := range []string{".dryfire.yaml", ".dryfire.yml"} {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			out = strings.TrimSuffix(base, ext)
			break
		}
	}
	if out == "" || out == "." || out == ".." {
		return "suite-" + nameHash(base)
	}
	return out
}

// Paths gives the cassette file of every case of a suite, in order:
// SUITE_DIR/cassettes/SUITE_BASE/SLUG.json. When two cases of the suite
// have one slug, the later ones get "-" and a hash of their name
// appended, so every case has its own file whatever the others are
// called, and a slug Windows keeps for a device (con, nul, aux, prn,
// com1, lpt1, …, whatever follows the dot) gets the hash too, so that a
// cassette recorded anywhere is a file on Windows. Paths depend only on
// the suite file's path and its case names, and are written with '/' on
// every OS (they are in reports and messages).
func Paths(suiteFile string, caseNames []string) []string {
	dir := filepath.Join(filepath.Dir(suiteFile), Dir, SuiteBase(suiteFile))
	taken := make(map[string]bool, len(caseNames))
	slugs := make([]string, len(caseNames))
	for i, n := range caseNames {
		s := Slug(n)
		if taken[s] || windowsDevice(s) {
			s = s + "-" + nameHash(n)
			for taken[s] { // a name hash that collides too: extend it
				s += "-" + nameHash(s)
			}
		}
		taken[s] = true
		slugs[i] = s
	}
	out := make([]string, len(caseNames))
	for i, s := range slugs {
		out[i] = filepath.ToSlash(filepath.Join(dir, s+".json"))
	}
	return out
}

// windowsDevice reports whether a slug is a name Windows reserves for a
// device, with or without an extension: "nul.json" opens the null device
// there (and "con.json" the console), not a file.
func windowsDevice(slug string) bool {
	switch slug {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(slug) == 4 && (slug[:3] == "com" || slug[:3] == "lpt") && slug[3] >= '0' && slug[3] <= '9'
}
