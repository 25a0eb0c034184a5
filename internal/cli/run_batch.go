package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

// Batches for a scheduler of one's own: run --list says what a run would
// run, each case by its id; run --cases runs any set of those ids; merge
// joins the batches' reports (docs/ci.md#batches).

// maxCaseIDs bounds the ids a --cases file holds (a run has at most
// that many cases anyway).
const maxCaseIDs = 10_000_000

func addBatchFlags(f *pflag.FlagSet, o *runOptions) {
	f.BoolVar(&o.list, "list", false, "list the cases the run would run, each with its id, and run none: a line ID  SUITE: NAME each, or with --json FILE|- the JSON list (id, suite, name, tags, trials, and expected_ms from --durations REPORT) for a scheduler of your own")
	f.StringVar(&o.cases, "cases", "", "run only the cases whose ids (from --list) are in `FILE` ('-': standard input): one id a line (the lines of --list too), or the JSON of --list --json; the report is a batch of the whole run, which dryfire merge joins with the others")
}

// runList prints what the run would run (run --list).
func runList(cmd *cobra.Command, e *env, o runOptions, args []string, ro *dryfire.RunOptions) error {
	if o.junitOut != "" || o.htmlOut != "" || o.baseline != "" || o.coverage || o.watch {
		return usageErr("--list runs nothing: it takes --json (the list as JSON), not --junit, --html, --baseline, --coverage or --watch")
	}
	var durations *report.Report
	if o.durations != "" {
		var err error
		if durations, err = readReport(o.durations); err != nil {
			return usageErr("--durations: %v; nothing listed", err)
		}
	}
	lo := loadOptions(e, o.python)
	lo.Lazy = true
	p, err := loadWith(e, lo, args, ": nothing listed", true)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	list, err := p.List(ro, durations)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing listed", err)}
	}
	if o.jsonOut != "" {
		return writeReportWith(e, o.jsonOut, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			return enc.Encode(list)
		})
	}
	w := bufio.NewWriter(e.stdout)
	for _, c := range list.Cases {
		fmt.Fprintf(w, "%s  %s: %s\n", c.ID, termtext.Printable(c.Suite), termtext.Printable(c.Name))
	}
	return w.Flush()
}

// readCaseIDs reads the ids of --cases: from a file, or standard input
// for "-". One id a line, first on it (the lines of run --list; blank
// lines and lines starting with # are left out), a JSON array of ids (or of objects with an "id"), or the
// JSON of run --list --json.
func readCaseIDs(e *env, path string) ([]string, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		name = "standard input"
		data, err = io.ReadAll(io.LimitReader(e.stdin, safeio.MaxData+1))
		if err == nil && int64(len(data)) > safeio.MaxData {
			err = fmt.Errorf("more than %d MiB (DRYFIRE_MAX_FILE_MB)", safeio.MaxData>>20)
		}
	} else {
		data, err = safeio.ReadFile(path, "case list", safeio.Limit(safeio.MaxData))
	}
	if err != nil {
		return nil, usageErr("--cases: reading %s: %v; nothing ran", name, err)
	}
	trimmed := bytes.TrimSpace(data)
	var ids []string
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		ids, err = jsonCaseIDs(data)
		if err != nil {
			return nil, usageErr("--cases: %s: %v; nothing ran", name, err)
		}
	} else {
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			// The first word: the lines of run --list are ids too.
			id, _, _ := strings.Cut(line, " ")
			if !isCaseID(id) {
				return nil, usageErr("--cases: %s:%d: %s is not a case id (lower-case letters, digits and '-', as run --list gives them); nothing ran", name, i+1, quoteCut(id))
			}
			ids = append(ids, id)
		}
	}
	if len(ids) > maxCaseIDs {
		return nil, usageErr("--cases: %s has %d ids, more than a run has cases (%d); nothing ran", name, len(ids), maxCaseIDs)
	}
	if len(ids) == 0 {
		return nil, usageErr("--cases: %s has no case id; nothing ran", name)
	}
	return ids, nil
}

// jsonCaseIDs reads ids from JSON: an array of ids or of objects with an
// id, or an object with such a "cases" array (run --list --json).
func jsonCaseIDs(data []byte) ([]string, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not JSON: %v", jsonProblem(data, dec, err))
	}
	items, ok := doc.([]any)
	if m, isObj := doc.(map[string]any); isObj {
		items, ok = m["cases"].([]any)
		if !ok {
			return nil, fmt.Errorf(`a JSON object of ids has them in "cases", as run --list --json writes it`)
		}
	}
	if !ok {
		return nil, fmt.Errorf("want an array of case ids")
	}
	ids := make([]string, 0, len(items))
	for i, it := range items {
		id, _ := it.(string)
		if m, isObj := it.(map[string]any); isObj {
			id, _ = m["id"].(string)
		}
		if !isCaseID(id) {
			return nil, fmt.Errorf("item %d is not a case id (a string of lower-case letters, digits and '-', or an object with one as \"id\")", i+1)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// jsonProblem is a JSON error with the line and column it is at.
func jsonProblem(data []byte, dec *json.Decoder, err error) string {
	off := dec.InputOffset()
	if se, ok := err.(*json.SyntaxError); ok {
		off = se.Offset
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		off = int64(len(data))
	}
	line := 1 + bytes.Count(data[:min(int(off), len(data))], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(data[:min(int(off), len(data))], '\n')
	return fmt.Sprintf("line %d, column %d: %v", line, col, strings.TrimPrefix(err.Error(), "json: "))
}

// isCaseID says whether s has the form of a case id (spec.CaseID):
// lower-case letters, digits and '-', at most 100 bytes.
func isCaseID(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// quoteCut is s quoted, cut to 80 bytes.
func quoteCut(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}
