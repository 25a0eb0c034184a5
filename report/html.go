package report

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// The page's style and script, kept as files so that they read as what
// they are; embedded, the report is one file that needs no network.
var (
	//go:embed html/report.css
	htmlCSS string
	//go:embed html/report.js
	htmlJS string
)

// HTML renders the report as one self-contained page: the summary,
// filters by status, suite and text, and each case's details (checks,
// tool calls with the rule that answered or the near miss, cassette
// differences, a drill's evidence and final state, every trial), drawn
// by its script from the report's JSON embedded in the page.
func (r *Report) HTML() ([]byte, error) {
	data, err := json.Marshal(r) // escapes <, > and &: safe inside <script>
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.Grow(len(data) + len(htmlCSS) + len(htmlJS) + 1024)
	b.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n")
	b.WriteString("<title>dryfire report</title>\n<style>\n")
	b.WriteString(htmlCSS)
	b.WriteString("</style>\n</head>\n<body>\n<header id=\"top\"></header>\n<main id=\"cases\"></main>\n")
	b.WriteString("<script type=\"application/json\" id=\"report\">")
	b.Write(data)
	b.WriteString("</script>\n<script>\n")
	b.WriteString(htmlJS)
	b.WriteString("</script>\n</body>\n</html>\n")
	return []byte(b.String()), nil
}
