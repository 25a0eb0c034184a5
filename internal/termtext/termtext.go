// Package termtext makes text from outside (case and tool names, error
// messages of real tools and models, file names) safe to print: on a
// terminal (Printable) and in a GitHub Actions log, whose lines are read
// for workflow commands (WorkflowData, WorkflowProperty). Everything
// dryfire prints that it did not write itself goes through one of them.
package termtext

import (
	"strconv"
	"strings"
)

// Printable is s with its control characters (a newline, an escape
// sequence's ESC, a carriage return, C1 controls such as the 8-bit CSI
// and OSC, the Unicode line and paragraph separators) written as Go
// escapes: a name or a text from a file or an agent cannot start a line
// of its own (so neither a forged PASS nor a workflow command), move the
// cursor, or colour the terminal. A tab stays.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f || c == 0xc2 || c == 0xe2 || c == 0xef {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029' || r == '\ufeff' || r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Lines is each line of s (split at its newlines) made Printable: for a
// text whose newlines are its own (a message of several lines), the
// parts from outside having been made Printable before they were joined.
func Lines(s string) []string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = Printable(strings.TrimSuffix(l, "\r"))
	}
	return ls
}

// WorkflowData is s as the message of a GitHub workflow command
// (::error ...::MESSAGE): each line Printable, '%' escaped, lines joined
// by the escaped newline %0A, which the runner turns back into one, so
// that nothing in s ends the command or starts another.
func WorkflowData(s string) string {
	ls := Lines(s)
	for i, l := range ls {
		ls[i] = strings.ReplaceAll(l, "%", "%25")
	}
	return strings.Join(ls, "%0A")
}

// WorkflowProperty is s as a property value of a workflow command
// (file=…, title=…): WorkflowData's escapes, and ':' and ',' too.
func WorkflowProperty(s string) string {
	return strings.NewReplacer(":", "%3A", ",", "%2C").Replace(WorkflowData(s))
}

// ShellQuote quotes s for a POSIX shell (and Python's shlex.split), only
// when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Count is n nouns: "1 case", "2 cases" (noun's plural its s form).
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
