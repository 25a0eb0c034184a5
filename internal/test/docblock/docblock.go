// Package docblock reads the fenced code blocks of the repository's docs
// pages (README.md, docs/*.md), so that tests run what the pages show:
// every block of every page is run by some test (examples'
// TestDocsBlocksAreRun checks it), and they find the block they run by a
// marker, a line the block starts a line with.
package docblock

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// A Block is one fenced code block of a page.
type Block struct {
	Line  int      // of the opening fence, from 1
	Lines []string // between the fences
	// Before is the last non-blank line before the opening fence: an
	// HTML comment there (<!-- file: NAME -->) can say what runs it.
	Before string
}

// All returns the fenced blocks of the page at path: a line starting
// with ``` (after spaces) opens a block and the next such line closes it.
func All(path string) ([]Block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks []Block
	var cur *Block
	before := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.HasPrefix(strings.TrimLeft(line, " "), "```")
		switch {
		case fence && cur == nil:
			cur = &Block{Line: n, Before: before}
		case fence:
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.Lines = append(cur.Lines, line)
		case strings.TrimSpace(line) != "":
			before = strings.TrimSpace(line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a fenced block is never closed", path, cur.Line)
	}
	return blocks, nil
}

// Index returns the index of the first block that has a line starting
// with marker, or -1.
func Index(blocks []Block, marker string) int {
	for i, b := range blocks {
		for _, l := range b.Lines {
			if strings.HasPrefix(l, marker) {
				return i
			}
		}
	}
	return -1
}

// Find returns the text of the page's first block that has a line
// starting with marker. When marker is a "$ command" line, that is the
// block's lines after it (the command's output); otherwise the whole
// block.
func Find(path, marker string) (string, error) {
	blocks, err := All(path)
	if err != nil {
		return "", err
	}
	i := Index(blocks, marker)
	if i < 0 {
		return "", fmt.Errorf("no fenced block in %s has a line starting with %q", path, marker)
	}
	lines := blocks[i].Lines
	if strings.HasPrefix(marker, "$ ") {
		for j, l := range lines {
			if strings.HasPrefix(l, marker) {
				lines = lines[j+1:]
				break
			}
		}
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// sketchKey is a "key": of a page's sketch of JSON.
var sketchKey = regexp.MustCompile(`"([^"\s]+)":`)

// SketchKeys returns the keys a page's sketch of a JSON document names
// (every "key": in it, … standing for what the page leaves out), in order.
func SketchKeys(sketch string) []string {
	var keys []string
	for _, m := range sketchKey.FindAllStringSubmatch(sketch, -1) {
		keys = append(keys, m[1])
	}
	return keys
}

// JSONKeys returns every object key of a decoded JSON value, at any depth.
func JSONKeys(v any) map[string]bool {
	keys := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				keys[k] = true
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return keys
}
