package cli

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire/internal/atomicfile"
	"github.com/dryfire-dev/dryfire/internal/termtext"
)

//go:embed initdata
var initData embed.FS

// initSets are the files each part of `dryfire init` writes, in order.
var initSets = []struct {
	flag  string // "" for the starter suite, always written
	files []string
}{
	{"", []string{"agent.dryfire.yaml"}},
	{"world", []string{"notes.world.yaml", "behaviors.star", "world.dryfire.yaml"}},
}

type initOptions struct {
	world, force bool
	command      string // --agent-command: the agent's command line
}

func newInitCommand(e *env) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter suite that passes at once",
		Long: `Write a starter suite into DIR (default: the current directory): one
tool, its mocks and two cases on the offline script model, commented,
passing as written. With --agent-command CMD, the starter suite is one
for the agent you already have instead: each case runs CMD (a command
line, split into words as a shell would, not run by a shell) with its
model calls answered by the case's script, offline and with no key.
With --world, also a stateful world (a package of notes with Starlark
behaviors) and a suite of drills on it.

Existing files are never overwritten unless --force is given: init then
writes nothing and names them.`,
		Example: `  dryfire init && dryfire run .
  dryfire init --agent-command "python3 agent.py" && dryfire run .
  dryfire init my-agent --world`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("init takes at most one directory, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return runInit(e, o, dir)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.world, "world", false, "also write a stateful world (notes.world.yaml, behaviors.star) and drills on it (world.dryfire.yaml)")
	f.StringVar(&o.command, "agent-command", "", "write the starter suite (agent.dryfire.yaml) for your agent, run as `CMD` (e.g. \"python3 agent.py\") on the script model, instead of the built-in loop's")
	f.BoolVar(&o.force, "force", false, "overwrite files that exist")
	return cmd
}

func runInit(e *env, o initOptions, dir string) error {
	var files []string
	for _, set := range initSets {
		if set.flag == "" || set.flag == "world" && o.world {
			files = append(files, set.files...)
		}
	}
	// The suite for the user's command replaces the starter suite; it is
	// made (and checked) before anything is written.
	var commandSuite []byte
	if o.command != "" {
		var err error
		if commandSuite, err = commandSuiteText(filepath.Join(dir, "agent.dryfire.yaml"), o.command); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("--agent-command: %w; nothing was written", err)}
		}
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s is a file, not a directory", dir)}
	}
	if !o.force {
		var exist []string
		for _, name := range files {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name))); err == nil {
				exist = append(exist, filepath.Join(dir, filepath.FromSlash(name)))
			} else if !errors.Is(err, fs.ErrNotExist) {
				return &exitError{code: exitInfra, err: err}
			}
		}
		if len(exist) > 0 {
			return &exitError{code: exitUsage, err: fmt.Errorf("not overwriting %s (--force overwrites); nothing was written", strings.Join(exist, ", "))}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &exitError{code: exitInfra, err: fmt.Errorf("creating %s: %w", dir, err)}
	}
	for _, name := range files {
		data, err := initData.ReadFile("initdata/" + name)
		if name == "agent.dryfire.yaml" && commandSuite != nil {
			data, err = commandSuite, nil
		}
		if err != nil {
			return &exitError{code: exitInfra, err: err}
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return &exitError{code: exitInfra, err: fmt.Errorf("creating %s: %w", filepath.Dir(path), err)}
		}
		if err := atomicfile.Write(path, data, 0o644); err != nil {
			return &exitError{code: exitInfra, err: fmt.Errorf("writing %s: %w", path, err)}
		}
		fmt.Fprintf(e.stdout, "wrote %s\n", filepath.ToSlash(path))
	}
	if o.command != "" {
		words, _ := splitCommand(o.command)
		for _, w := range words[1:] {
			if looksLikeFile(w) {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(w))); errors.Is(err, fs.ErrNotExist) {
					fmt.Fprintf(e.stdout, "note: %s is not in %s: the suite runs the command there\n", termtext.Printable(w), dir)
				}
			}
		}
	}
	fmt.Fprintf(e.stdout, "next: dryfire run %s\n", dir)
	return nil
}

// looksLikeFile says whether a word of a command names a file beside the
// suite (agent.py, ./run.sh, src/main.js), not a flag or a plain word.
func looksLikeFile(w string) bool {
	return w != "" && w[0] != '-' && !strings.Contains(w, "=") && strings.ContainsAny(w, "./") && !filepath.IsAbs(w)
}
