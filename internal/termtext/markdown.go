package termtext

import "strings"

// Markdown is s as literal text in GitHub-flavoured Markdown, on one line
// (a table cell, a list item, a heading): its control characters as
// Printable writes them, a tab as a space, and every ASCII punctuation
// character backslash-escaped, which CommonMark reads as that character
// and nothing else. So no emphasis, link, code span, HTML tag or entity,
// table pipe, or www./http: autolink starts in it; an e-mail address
// still shows as a mailto link of its own text (GFM links those after
// escapes are read).
func Markdown(s string) string {
	s = Printable(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\t':
			b.WriteByte(' ')
		case c < 0x80 && isPunct(c):
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isPunct: CommonMark's ASCII punctuation, each of which a backslash
// escapes.
func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
