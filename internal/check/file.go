package check

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// fileCheck judges a file of the case's workspace after the run.
func fileCheck(c *spec.Check, f *Facts) (bool, string) {
	if f.Workspace == "" {
		return false, "expected a file " + c.File + " in the case's workspace, but the case has none (give workspace: on the suite or the case)"
	}
	at := c.File
	path, err := safeio.Confine(f.Workspace, f.Workspace, c.File)
	if err != nil {
		return false, fmt.Sprintf("%s: %s", at, safeio.Describe("the path", err))
	}
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if c.Absent {
			return true, at + " is absent (expected absent)"
		}
		return false, "expected " + at + " to exist; it does not" + nearFiles(f.Workspace, c.File)
	case err != nil:
		return false, fmt.Sprintf("reading %s: %v", at, err)
	case c.Absent:
		what := "a file"
		if info.IsDir() {
			what = "a directory"
		}
		return false, fmt.Sprintf("expected %s to be absent; it is %s", at, what)
	case c.Exists:
		return true, at + " exists (expected it to)"
	}
	data, err := safeio.ReadFile(path, "file", safeio.Limit(safeio.MaxData))
	if err != nil {
		return false, fmt.Sprintf("reading %s: %v", at, err)
	}
	text := string(data)
	var ok []string
	if c.Contains != nil {
		if !strings.Contains(text, *c.Contains) {
			return false, fmt.Sprintf("expected %s to contain %s; it holds %s", at, value.Canonical(*c.Contains), snippet(text))
		}
		ok = append(ok, "contains "+value.Canonical(*c.Contains))
	}
	if c.Regex != nil {
		if !c.Regex.MatchString(text) {
			return false, fmt.Sprintf("expected %s to match /%s/; it holds %s", at, c.Regex, snippet(text))
		}
		ok = append(ok, "matches /"+c.Regex.String()+"/")
	}
	if c.Equals != nil {
		if text != *c.Equals {
			return false, fmt.Sprintf("expected %s to hold exactly %s; it holds %s", at, snippet(*c.Equals), snippet(text))
		}
		ok = append(ok, "holds the expected text")
	}
	if c.SHA256 != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != c.SHA256 {
			return false, fmt.Sprintf("expected %s to have SHA-256 %s; it has %s (%d bytes)", at, c.SHA256, got, len(data))
		}
		ok = append(ok, "has the expected SHA-256")
	}
	if c.JSONPath != "" {
		doc, err := value.Parse(data)
		if err != nil {
			return false, fmt.Sprintf("expected %s to be JSON with a value at %s; it is not JSON (%v): %s", at, c.JSONPath, err, snippet(text))
		}
		p, _ := reqmatch.ParsePath(c.JSONPath) // checked by the loader
		got, found := p.Lookup(doc)
		switch {
		case !found:
			return false, fmt.Sprintf("expected %s to have a value at %s; it has none", at, c.JSONPath)
		case c.HasEquals && !value.Equal(got, c.JSONEquals):
			return false, fmt.Sprintf("expected %s at %s to be %s; it is %s", at, c.JSONPath, short(c.JSONEquals), short(got))
		case c.HasEquals:
			ok = append(ok, "has "+short(got)+" at "+c.JSONPath)
		default:
			ok = append(ok, "has a value at "+c.JSONPath)
		}
	}
	return true, at + " " + strings.Join(ok, ", ")
}

// snippet is a file's text for a message: quoted, cut.
func snippet(s string) string {
	return value.Truncate(value.Canonical(s), 120)
}

// nearFiles names the files of the workspace directory the path is in,
// when there are few: what the agent wrote instead.
func nearFiles(root, rel string) string {
	dir := filepath.Join(root, filepath.Dir(safeio.FromName(rel)))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return " (its directory is empty)"
	}
	if len(names) > 8 {
		return fmt.Sprintf(" (its directory holds %d entries)", len(names))
	}
	return " (its directory holds " + strings.Join(names, ", ") + ")"
}
