package yamlnode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	yaml "go.yaml.in/yaml/v4"
)

// Every file dryfire generates holds text from outside (a tool's name,
// an OpenAPI title, a command line): it is built as nodes, encoded by
// Encode, read back and compared with the nodes before it is written, so
// that no string in it can add a key, a rule or a line. Text inserted
// between the lines of a user's file is made of KeyText, InlineText and
// CommentText, and the parts inserted are compared with Equal after the
// file is read back.

// ErrNotMeant is what Encode and Equal's failures wrap: the text does not
// read back as the nodes it was made from (a bug of dryfire, never of the
// input it quotes).
var ErrNotMeant = errors.New("the YAML written does not read back as meant")

// Encode is n (a document's content) as YAML text, as Dump writes it,
// read back and compared with n: an error, wrapping ErrNotMeant, names
// the first place where they differ. Nothing of it should be written
// then.
func Encode(n *yaml.Node, more ...yaml.Option) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("%w: encoding: %v", ErrNotMeant, r)
		}
	}()
	data = Dump(n, more...)
	if err := Check(data, n); err != nil {
		return nil, err
	}
	return data, nil
}

// Check reads data (a YAML document) and compares its content with want.
func Check(data []byte, want *yaml.Node) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%w: %v", ErrNotMeant, err)
	}
	got := &doc
	if got.Kind == yaml.DocumentNode && len(got.Content) == 1 {
		got = got.Content[0]
	}
	if want.Kind == yaml.DocumentNode && len(want.Content) == 1 {
		want = want.Content[0]
	}
	return Equal(got, want)
}

// Equal compares a node read from text (got) with the node it was meant
// to be (want): the same kinds, the same keys in the same order, the same
// scalar values and, where want has a tag, the same resolved tag. An
// error wrapping ErrNotMeant says where they differ.
func Equal(got, want *yaml.Node) error {
	if err := equal(got, want, ""); err != nil {
		return fmt.Errorf("%w: %v", ErrNotMeant, err)
	}
	return nil
}

func equal(got, want *yaml.Node, path string) error {
	at := func() string {
		if got != nil && got.Line > 0 {
			return fmt.Sprintf("line %d: %s", got.Line, orRoot(path))
		}
		return orRoot(path)
	}
	if got == nil {
		return fmt.Errorf("%s: missing", orRoot(path))
	}
	if want.Kind == yaml.AliasNode {
		// An alias of the file as it was: the same name is enough.
		if got.Kind != yaml.AliasNode || got.Value != want.Value {
			return fmt.Errorf("%s: not the alias *%s", at(), want.Value)
		}
		return nil
	}
	if got.Kind != want.Kind {
		return fmt.Errorf("%s: a %s where a %s was meant", at(), KindName(got.Kind), KindName(want.Kind))
	}
	switch want.Kind {
	case yaml.ScalarNode:
		if got.Value != want.Value {
			return fmt.Errorf("%s: %s where %s was meant", at(), strconv.Quote(cut(got.Value)), strconv.Quote(cut(want.Value)))
		}
		if want.Tag != "" && got.ShortTag() != want.ShortTag() {
			return fmt.Errorf("%s: %s reads as %s, not %s", at(), strconv.Quote(cut(got.Value)), got.ShortTag(), want.ShortTag())
		}
	case yaml.MappingNode:
		if len(got.Content) != len(want.Content) {
			return fmt.Errorf("%s: %d keys where %d were meant", at(), len(got.Content)/2, len(want.Content)/2)
		}
		for i := 0; i+1 < len(want.Content); i += 2 {
			k := want.Content[i].Value
			if err := equal(got.Content[i], want.Content[i], path+"/"+k+" (key)"); err != nil {
				return err
			}
			if err := equal(got.Content[i+1], want.Content[i+1], path+"/"+k); err != nil {
				return err
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		if len(got.Content) != len(want.Content) {
			return fmt.Errorf("%s: %d items where %d were meant", at(), len(got.Content), len(want.Content))
		}
		for i := range want.Content {
			if err := equal(got.Content[i], want.Content[i], path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "the top"
	}
	return strconv.Quote(cut(path))
}

func cut(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// KindName names a node kind in messages.
func KindName(k yaml.Kind) string {
	switch k {
	case yaml.ScalarNode:
		return "scalar"
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	return "node"
}

// KeyText is s written as a mapping key on a line of its own ("KEY:"
// follows it): plain when it reads back as the string s, else double
// quoted, with every control character escaped. It never holds a line
// break.
func KeyText(s string) string { return InlineText(s) }

// InlineText is the string s as a scalar on one line, in block or flow
// context: plain when that reads back as the string s, else double
// quoted (newlines, control characters, quotes and non-printing
// characters escaped).
func InlineText(s string) string {
	if plainSafe(s) {
		return s
	}
	return doubleQuoted(s)
}

// plainSafe says s can be written plain anywhere on a line: letters,
// digits and a few inner punctuation characters, not a word YAML reads
// as another type.
func plainSafe(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case r >= '0' && r <= '9', r == '-' || r == '.' || r == '/':
			if i == 0 {
				return false // a number, "-" or "." leads: quote
			}
		default:
			return false
		}
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte("k: "+s), &v); err != nil {
		return false
	}
	_, val := v.Content[0].Content[0], v.Content[0].Content[1]
	return val.ShortTag() == "!!str" && val.Value == s
}

// doubleQuoted is s as a YAML double-quoted scalar: JSON's escapes, and
// \xXX, \uXXXX, \UXXXXXXXX for what does not print.
func doubleQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r == unicode.ReplacementChar, r < ' ', r == 0x7f, r >= 0x80 && r < 0xa0, r == '\ufeff',
				r == '\u2028' || r == '\u2029', !unicode.IsPrint(r) && r != ' ':
				if r <= 0xffff {
					fmt.Fprintf(&b, `\u%04X`, r)
				} else {
					fmt.Fprintf(&b, `\U%08X`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// CommentText is s fit for the text of a # comment: one line, every
// control or non-printing character (a newline, ESC, …) written as a Go
// escape, so that nothing after the # can start a line of YAML.
func CommentText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r == unicode.ReplacementChar, r < ' ', r == 0x7f, r >= 0x80 && r < 0xa0, r == '\u2028' || r == '\u2029', r == '\ufeff':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
