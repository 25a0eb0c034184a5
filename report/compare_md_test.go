package report_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

// cmarkGFM renders Markdown with cmark-gfm, GitHub's own renderer (its
// fork of cmark; Debian's cmark-gfm package), with the extensions GitHub
// turns on and raw HTML let through, as GitHub lets a sanitized subset
// through: whatever of a case name became HTML would show. Without
// cmark-gfm the test is skipped, unless DRYFIRE_TEST_CMARK=1
// (scripts/ci.d/25-markdown.sh installs it and sets that).
func cmarkGFM(t *testing.T, md []byte) string {
	t.Helper()
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		if os.Getenv("DRYFIRE_TEST_CMARK") == "1" {
			t.Fatal("cmark-gfm is not installed (apt-get install cmark-gfm)")
		}
		t.Skip("cmark-gfm is not installed (apt-get install cmark-gfm)")
	}
	cmd := exec.Command(bin, "--unsafe", "-e", "table", "-e", "autolink", "-e", "tagfilter", "-e", "strikethrough")
	cmd.Stdin = bytes.NewReader(md)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v", err)
	}
	return string(out)
}

// htmlText is s as cmark-gfm writes text in HTML.
var htmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace

var (
	tableRE = regexp.MustCompile(`(?s)<table>.*?</table>`)
	rowRE   = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE  = regexp.MustCompile(`(?s)<t[dh](?: align="[a-z]+")?>(.*?)</t[dh]>`)
)

// TestCompareMarkdownRenders: the golden comparison's Markdown, rendered
// by cmark-gfm, is a table of the runs and one of each kind of change,
// every row of four (or nine) cells; the hostile case name is one cell
// of literal text, and no tag or link came from a name.
func TestCompareMarkdownRenders(t *testing.T) {
	c := compareGolden(t)
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	out := cmarkGFM(t, md.Bytes())
	tables := tableRE.FindAllString(out, -1)
	if want := 1 + kindsSeen(c); len(tables) != want {
		t.Fatalf("%d tables, want %d:\n%s", len(tables), want, out)
	}
	name := "<b>x</b> | *y* [a](http://e.com) www.e.com `z`\n::error::forged"
	found := false
	for i, tab := range tables {
		for _, row := range rowRE.FindAllStringSubmatch(tab, -1) {
			cells := cellRE.FindAllStringSubmatch(row[1], -1)
			if want := map[bool]int{true: 9, false: 4}[i == 0]; len(cells) != want {
				t.Errorf("table %d: a row of %d cells, want %d: %s", i+1, len(cells), want, row[0])
			}
			if len(cells) > 1 && cells[1][1] == htmlText(termtext.Printable(name)) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no cell holds the hostile name as its text:\n%s", out)
	}
	for _, bad := range []string{"<b>", "<i>", "<em>", "<strong>", "<code>", `<a href="http://e.com"`, `href="http://www.e.com"`} {
		if strings.Contains(out, bad) {
			t.Errorf("the HTML has %s, from a name:\n%s", bad, out)
		}
	}
}

// kindsSeen counts the kinds of change c has a case of.
func kindsSeen(c *report.Comparison) int {
	n := 0
	for _, k := range report.ChangeKinds() {
		if c.Count(k) > 0 {
			n++
		}
	}
	return n
}

// TestMarkdownEscapeRenders: termtext.Markdown of each text, alone in a
// table cell, renders as exactly that text.
func TestMarkdownEscapeRenders(t *testing.T) {
	texts := []string{
		"<b>x</b> | *y*", "`code` and ``two``", "[link](http://e.com)", "![img](x.png)",
		"<script>alert(1)</script>", "&amp; &lt; &#64;", "_a_ __b__ ~~c~~ *d*", "# heading", "> quote",
		"- item", "1. item", `back\slash \| \*`, "www.e.com http://e.com ftp://e.com", "a|b||c",
		"<!-- comment -->", "line\nbreak\r\tand tab", "trailing \\", "<http://e.com>", "x <br> y",
		"[ref]: http://e.com", "{braces} and ~tilde~", "é 😀 → ×",
	}
	var b strings.Builder
	b.WriteString("| text |\n|---|\n")
	for _, s := range texts {
		b.WriteString("| " + termtext.Markdown(s) + " |\n")
	}
	out := cmarkGFM(t, []byte(b.String()))
	var cells []string
	for _, row := range rowRE.FindAllStringSubmatch(out, -1)[1:] {
		for _, c := range cellRE.FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, c[1])
		}
	}
	if len(cells) != len(texts) {
		t.Fatalf("%d cells for %d texts:\n%s", len(cells), len(texts), out)
	}
	for i, s := range texts {
		want := htmlText(strings.ReplaceAll(termtext.Printable(s), "\t", " "))
		if cells[i] != want {
			t.Errorf("%q renders as %q, want %q", s, cells[i], want)
		}
	}
}
