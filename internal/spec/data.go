package spec

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Cases from data: an item of cases: with a from: key is a template, and
// each row of the data file it names (JSON Lines, a JSON array, CSV with a
// header, or a YAML list) becomes one case, the template with every
// {{column}} in its strings replaced by the row's value ({{elicit.…}} and
// {{sample.…}} are left for the call: ask.go). A string that is
// one placeholder and nothing else takes the value with its JSON type (a
// number, an object); inside a longer string a value is its text.
//
// The rows become YAML nodes before anything else reads the suite, so a
// row's case is validated and run as an inline one. Its nodes carry a
// virtual line that names the data file and the row's line
// (yamlpos.VirtualLine), and every position made from them is that file
// and line.

// maxRows bounds the rows one data file may give.
const maxRows = 1_000_000

// maxDataLine bounds one line of a JSON Lines file.
const maxDataLine = 4 << 20

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*([^{}\s]+)\s*\}\}`) })

// row is one row of a data file: its line and its values by column, or
// the text of a JSON Lines row not decoded yet (values nil; see decoded).
type row struct {
	line   int
	values map[string]any
	text   []byte
}

// decoded is r with its values, decoding its text. A row the first pass
// read as good reads so again (the same bytes, the same code); were it
// not, the case would be told.
func (r row) decoded(d *yamlpos.Collector, source int) row {
	if r.text != nil {
		m, problem := jsonRow(r.text)
		if m == nil {
			d.Add(yamlpos.Error, yamlpos.VirtualLine(source, r.line), 1, "internal error: this row reads differently the second time: %s", problem)
			m = map[string]any{}
		}
		r.values, r.text = m, nil
	}
	return r
}

// dataCases makes the cases of a from: item, one row at a time: each is
// handed to one (false: stop the whole suite) and let go. The file is
// read twice, first for its columns (and every bad row), so that no row
// is kept.
func (x *decoder) dataCases(item *yaml.Node, k *caseChecker) bool {
	d := x.d
	fromKey, from := yamlpos.Lookup(item, "from")
	if from.Kind != yaml.ScalarNode || from.Value == "" {
		d.Add(yamlpos.Error, fromKey.Line, fromKey.Column, "from must name a data file (.jsonl, .json, .csv, .yaml), relative to the suite")
		return true
	}
	rows, source, ok := openData(x.file, from, x.opts, d)
	if !ok {
		return true
	}
	bad := func(line int, format string, args ...any) {
		d.Add(yamlpos.Error, yamlpos.VirtualLine(source, line), 1, format, args...)
	}
	seen := map[string]bool{}
	var columns []string
	n := 0
	header := rows(bad, func(r row) bool {
		if n++; n > maxRows {
			bad(r.line, "more than %d rows in one data file; split it", maxRows)
			return false
		}
		for k := range r.values {
			if !seen[k] {
				seen[k] = true
				columns = append(columns, k)
			}
		}
		return true
	})
	if n > maxRows {
		return true
	}
	for _, h := range header {
		if !seen[h] {
			seen[h] = true
			columns = append(columns, h)
		}
	}
	slices.Sort(columns)
	checkColumns(item, columns, from.Value, d)
	quiet := func(int, string, ...any) {} // reported in the first pass
	t := newTemplate(item)
	x.rows = x.rowSource(t, from.Value, columns, source, n) // rows kept as stubs (lazy.go)
	defer func() { x.rows = nil }()
	rc := k.rowChecker(t, columns, source, from.Value, n)
	rows(quiet, rc.add)
	return rc.done()
}

// openData reads the data file the node names and returns its rows,
// which can be gone through more than once: each call hands every row
// to each (until it returns false), reports bad ones with bad, and returns
// the header of a CSV file. The passes of a JSON Lines file after the
// first hand on the text of each row the first found good, not decoded.
func openData(suite string, from *yaml.Node, opts *Options, d *yamlpos.Collector) (func(bad func(int, string, ...any), each func(row) bool) []string, int, bool) {
	root := opts.Root
	if root == "" {
		root = safeio.DefaultRoot(suite)
	}
	path, err := safeio.Confine(root, filepath.Dir(suite), from.Value)
	if err != nil {
		d.Add(yamlpos.Error, from.Line, from.Column, "data file %s", safeio.Describe(from.Value, err))
		return nil, 0, false
	}
	data, err := safeio.ReadFile(path, "data file", safeio.Limit(safeio.MaxData))
	if err != nil {
		d.Add(yamlpos.Error, from.Line, from.Column, "reading data file %s: %v", from.Value, unwrapPath(err))
		return nil, 0, false
	}
	var read func(data []byte, bad func(int, string, ...any), each func(row) bool) []string
	raw := false // the next pass of a JSON Lines file is raw
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".jsonl", ".ndjson":
		f := &jsonLinesFile{keys: newRowKeys()}
		read = func(data []byte, bad func(int, string, ...any), each func(row) bool) []string {
			f.read(data, bad, each, raw)
			raw = true
			return nil
		}
	case ".json":
		read = jsonArray
	case ".csv":
		read = csvRows
	case ".yaml", ".yml":
		read = yamlRows
	default:
		d.Add(yamlpos.Error, from.Line, from.Column, "data file %s: the kinds are .jsonl (or .ndjson), .json, .csv, .yaml and .yml, not %q", from.Value, ext)
		return nil, 0, false
	}
	d.Sources = append(d.Sources, path)
	return func(bad func(int, string, ...any), each func(row) bool) []string {
		return read(data, bad, each)
	}, len(d.Sources) - 1, true
}

func unwrapPath(err error) error {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) && strings.HasPrefix(err.Error(), "open ") {
		return pe.Unwrap()
	}
	return err
}

// A jsonLinesFile is a JSON Lines file read by dataCases: first for its
// columns (only the keys of each row are kept) and its bad lines, then
// raw: each good line's text, decoded where its case is checked (a worker).
type jsonLinesFile struct {
	keys *rowKeys // the first pass's, when it keeps only keys
	bad  []int    // the lines the first pass found bad, in order
}

func (f *jsonLinesFile) read(data []byte, bad func(int, string, ...any), each func(row) bool, raw bool) {
	skip := f.bad
	if !raw {
		f.bad = nil
	}
	line, err := eachLine(data, func(line int, text []byte) bool {
		if raw {
			for len(skip) > 0 && skip[0] < line {
				skip = skip[1:]
			}
			if len(skip) > 0 && skip[0] == line || len(bytes.TrimSpace(text)) == 0 {
				return true
			}
			return each(row{line: line, text: text})
		}
		m, problem := readRow(text, f.keys)
		if problem != "" {
			f.bad = append(f.bad, line)
			bad(line, "%s", problem)
			return true
		}
		return m == nil || each(row{line: line, values: m})
	})
	if err != nil && !raw {
		bad(line+1, "reading the data file: %v (a line may hold at most %d bytes)", err, maxDataLine)
	}
}

func jsonArray(data []byte, bad func(int, string, ...any), each func(row) bool) []string {
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		bad(1, "a .json data file is an array of row objects")
		return nil
	}
	for dec.More() {
		// The row's line: where its first character is.
		off := dec.InputOffset()
		for int(off) < len(data) && strings.ContainsRune(" \t\r\n,", rune(data[off])) {
			off++
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			bad(lineAt(off), "not JSON: %v", err)
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			bad(lineAt(off), "a row is a JSON object of columns, not %s", yamlpos.Describe(v))
			continue
		}
		if !each(row{line: lineAt(off), values: m}) {
			return nil
		}
	}
	return nil
}

func csvRows(data []byte, bad func(int, string, ...any), each func(row) bool) []string {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		bad(1, "a .csv data file starts with a header row naming its columns: %v", csvProblem(err))
		return nil
	}
	for i, h := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if header[i] == "" {
			bad(1, "column %d of the header has no name", i+1)
			return nil
		}
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return header
		}
		if err != nil {
			line := 1
			if pe, ok := errors.AsType[*csv.ParseError](err); ok {
				line = pe.StartLine
			}
			bad(line, "not CSV: %v", csvProblem(err))
			return header
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			bad(line, "%d fields, but the header names %d columns", len(rec), len(header))
			continue
		}
		m := make(map[string]any, len(rec))
		for i, v := range rec {
			m[header[i]] = v
		}
		if !each(row{line: line, values: m}) {
			return header
		}
	}
}

func csvProblem(err error) error {
	if pe, ok := errors.AsType[*csv.ParseError](err); ok {
		return pe.Err
	}
	return err
}

func yamlRows(data []byte, bad func(int, string, ...any), each func(row) bool) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		bad(1, "not YAML: %v", err)
		return nil
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
		bad(1, "a .yaml data file is a list of row mappings")
		return nil
	}
	for _, n := range doc.Content[0].Content {
		var v any
		if n.Kind != yaml.MappingNode {
			bad(n.Line, "a row is a mapping of columns")
			continue
		}
		if err := n.Decode(&v); err != nil {
			bad(n.Line, "cannot read this row: %v", err)
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			bad(n.Line, "a row is a mapping of columns with string keys")
			continue
		}
		if !each(row{line: n.Line, values: m}) {
			return nil
		}
	}
	return nil
}

// checkColumns reports, once each, the placeholders of a template that
// name no column of its data.
func checkColumns(item *yaml.Node, columns []string, file string, d *yamlpos.Collector) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.ScalarNode {
			for _, m := range placeholder().FindAllStringSubmatch(n.Value, -1) {
				if !slices.Contains(columns, m[1]) && !IsAskPlaceholder(m[1]) {
					d.Add(yamlpos.Error, n.Line, n.Column, "%s has no column %q%s (its columns: %s)", file, m[1], suggest.DidYouMean(m[1], columns), strings.Join(columns, ", "))
				}
			}
			return
		}
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				continue // keys are not templated
			}
			walk(c)
		}
	}
	walk(item)
}
