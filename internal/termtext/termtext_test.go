package termtext

import (
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain name":               "plain name",
		"tab\tstays":               "tab\tstays",
		"a\n::stop-commands::x":    `a\n::stop-commands::x`,
		"\x1b[31mred\x1b[0m":       `\x1b[31mred\x1b[0m`,
		"\x1b]8;;http://x\x07link": `\x1b]8;;http://x\alink`,
		"c1 \u009b31m csi":         `c1 \u009b31m csi`,
		"sep\u2028line":            `sep\u2028line`,
		"bidi \u202eevil":          `bidi \u202eevil`,
		"cr\roverwrite":            `cr\roverwrite`,
		"é and 😀 stay":             "é and 😀 stay",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWorkflowData(t *testing.T) {
	got := WorkflowData("first 100%\nsecond\r\n::warning::x\x1b[2J")
	if want := `first 100%25%0Asecond%0A::warning::x\x1b[2J`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if p := WorkflowProperty("s.dryfire.yaml: a, b\n::error::x"); strings.ContainsAny(p, ":,\n") {
		t.Errorf("property %q", p)
	}
}

func TestMarkdown(t *testing.T) {
	for in, want := range map[string]string{
		"plain name":        "plain name",
		"<b>x</b> | *y*":    `\<b\>x\<\/b\> \| \*y\*`,
		"a\nb\tc":           `a\\nb c`,
		"[l](http://e.com)": `\[l\]\(http\:\/\/e\.com\)`,
		"é → 😀":             "é → 😀",
		"`code` & <!-- -->": "\\`code\\` \\& \\<\\!\\-\\- \\-\\-\\>",
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"dryfire":        "dryfire",
		"/a/b-c_d.e:f=g": "/a/b-c_d.e:f=g",
		"":               "''",
		"a b":            "'a b'",
		"it's":           `'it'\''s'`,
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// Names and texts from files or agents cannot start a line of their own
// or colour the terminal: their control characters are escaped.
func TestPrintableLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"tab\tstays", "tab\tstays"},
		{"a\nPASS  forged", `a\nPASS  forged`},
		{"\x1b[32mgreen\x1b[0m", `\x1b[32mgreen\x1b[0m`},
		{"cr\roverwrite", `cr\roverwrite`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085next", `c1\u0085next`},
		{"line\u2028sep", `line\u2028sep`},
		{"café → ✓ …", "café → ✓ …"},
		{"nul\x00", `nul\x00`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
