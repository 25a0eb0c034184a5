// Command gendocs writes the reference pages of docs/reference (every
// suite and world key, command, flag and exit code) from the schemas and
// the command tree. Run it from anywhere in the repository:
//
//	go run ./internal/cli/gendocs
//
// internal/cli's TestReferenceIsCurrent fails when the committed pages
// differ from what it writes.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	pages, err := cli.Reference()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "docs", "reference")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := pages[name]
		path := filepath.Join(dir, name)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join("docs", "reference", name))
	}
	return nil
}

// moduleRoot is the nearest directory at or above the working directory
// that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
