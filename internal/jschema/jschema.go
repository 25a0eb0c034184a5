// Package jschema compiles and applies JSON Schemas (2020-12 by default)
// for dryfire: the suite format itself, tools' input schemas and the
// output check's json_schema. It keeps the library's types in one place,
// turns its error tree into flat, positioned leaves, and answers the
// values it can tell are valid without the library (quick.go).
package jschema

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dryfire-dev/dryfire/internal/jsonschema"
)

// Schema is a compiled JSON Schema, with its quick tree (nil: none).
type Schema struct {
	s    *jsonschema.Schema
	q    *quick
	late *lateCompile // an embedded schema: s is compiled by the first value the quick tree cannot pass
}

// lateCompile compiles the validators of an embedded schema's fragments
// once, on first need: a run whose suite the quick trees pass never
// compiles the suite format's schema (nor the draft's meta-schema).
type lateCompile struct {
	quickOnce sync.Once
	once      sync.Once
	v         any
	url       string
	fragments []string
	out       []*Schema
	err       error
}

func (l *lateCompile) quick() {
	l.quickOnce.Do(func() {
		if qc := newQuickCompiler(l.v); qc != nil {
			for i, f := range l.fragments {
				l.out[i].q = qc.at(f)
			}
		}
	})
}

func (l *lateCompile) compile() {
	l.once.Do(func() {
		ss, err := compileFragments(l.v, l.url, l.fragments, false)
		if err != nil {
			l.err = fmt.Errorf("internal error: compiling the embedded schema %s: %w", l.url, err)
			return
		}
		for i, s := range ss {
			l.out[i].s = s.s
		}
	})
}

var counter atomic.Int64

// Compile compiles a schema given as a JSON value. url names it in
// messages; empty means a generated in-memory name.
func Compile(v any, url string) (*Schema, error) {
	return CompileAt(v, url, "")
}

// CompileAt compiles the part of a schema at fragment ("#/$defs/x"; ""
// is the whole schema), its references resolved against the whole.
func CompileAt(v any, url, fragment string) (*Schema, error) {
	if url == "" {
		url = fmt.Sprintf("mem://schema/%d.json", counter.Add(1))
	}
	ss, err := CompileFragments(v, url, []string{fragment})
	if err != nil {
		return nil, err
	}
	return ss[0], nil
}

// CompileFragments compiles the schemas at fragments ("#/$defs/x") of
// the one schema v registered under url, sharing what they share.
func CompileFragments(v any, url string, fragments []string) ([]*Schema, error) {
	return compileFragments(v, url, fragments, true)
}

// EmbeddedFragments is CompileFragments of a schema shipped in the binary
// (the suite and world formats), which TestEmbeddedSchemasCompile compiles
// in full: its quick trees on first use, its validators on the first value
// the quick trees cannot pass.
func EmbeddedFragments(v any, url string, fragments []string) []*Schema {
	l := &lateCompile{v: v, url: url, fragments: fragments, out: make([]*Schema, len(fragments))}
	for i := range fragments {
		l.out[i] = &Schema{late: l}
	}
	return l.out
}

// Embedded is EmbeddedFragments of the whole schema (fragment "") or of
// one part of it.
func Embedded(v any, url, fragment string) *Schema {
	return EmbeddedFragments(v, url, []string{fragment})[0]
}

func compileFragments(v any, url string, fragments []string, bounded bool) ([]*Schema, error) {
	if bounded {
		if _, err := expanded(v, MaxExpanded); err != nil {
			return nil, err
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, v); err != nil {
		return nil, clean(err)
	}
	out := make([]*Schema, len(fragments))
	var qc *quickCompiler
	if bounded {
		qc = newQuickCompiler(v)
	}
	for i, f := range fragments {
		s, err := c.Compile(url + f)
		if err != nil {
			return nil, clean(err)
		}
		out[i] = &Schema{s: s}
		if qc != nil {
			out[i].q = qc.at(f)
		}
	}
	return out, nil
}

func clean(err error) error {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		var ve *jsonschema.ValidationError
		if errors.As(se.Err, &ve) {
			leaves := Leaves(ve)
			if len(leaves) > 0 {
				l := leaves[0]
				return fmt.Errorf("not a valid JSON Schema: at %s: %s", Pointer(l.Path), l.Message)
			}
		}
		return fmt.Errorf("not a valid JSON Schema")
	}
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "jsonschema: ", "")
	return errors.New(msg)
}

// A Leaf is one concrete failure of a value against a schema.
type Leaf struct {
	Path    []string // instance location
	Keyword string   // absolute keyword location (schema URL + fragment)
	Kind    jsonschema.ErrorKind
	Message string
}

// Validate applies the schema; it returns the failures, nil when v is valid.
func (s *Schema) Validate(v any) []Leaf {
	if s.late != nil {
		s.late.quick()
	}
	if s.q != nil && s.q.check(v, 0) == yes {
		return nil // certainly valid: see quick.go
	}
	return s.validate(v)
}

// validate applies the validator alone.
func (s *Schema) validate(v any) []Leaf {
	if s.late != nil {
		s.late.compile()
		if s.late.err != nil {
			return []Leaf{{Message: s.late.err.Error()}}
		}
	}
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Leaf{{Message: err.Error()}}
	}
	return Leaves(ve)
}

// Leaves flattens an error tree, in instance order, dropping the grouping
// nodes (allOf, $ref, ...) that carry no message of their own.
func Leaves(ve *jsonschema.ValidationError) []Leaf {
	var out []Leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Leaf{
				Path:    e.InstanceLocation,
				Keyword: e.SchemaURL,
				Kind:    e.ErrorKind,
				Message: e.ErrorKind.String(),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := strings.Join(out[i].Path, "\x00"), strings.Join(out[j].Path, "\x00")
		if a != b {
			return a < b
		}
		if out[i].Message != out[j].Message {
			return out[i].Message < out[j].Message
		}
		return out[i].Keyword < out[j].Keyword
	})
	return out
}

// Pointer renders an instance location as a JSON Pointer ("" is the root).
func Pointer(path []string) string {
	if len(path) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		p = strings.ReplaceAll(p, "~", "~0")
		b.WriteString(strings.ReplaceAll(p, "/", "~1"))
	}
	return b.String()
}
