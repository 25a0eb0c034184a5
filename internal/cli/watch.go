package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// run --watch: run once, then again each time a file under the paths
// changes (a suite, a world, a behavior module, an impl module, a
// cassette), until Ctrl-C. A change made while a run runs is seen when it
// ends; what the run writes itself (reports, recorded cassettes) is not a
// change. A change to suite files only re-runs those
// suites; any other change re-runs them all. The files are polled (no
// platform notification API), every watchEvery; a burst of writes is one
// change once it has been quiet for watchQuiet.

const (
	watchEvery = 250 * time.Millisecond
	watchQuiet = 200 * time.Millisecond
	// maxWatched bounds the files one watch keeps the times of.
	maxWatched = 100_000
)

func runWatch(cmd *cobra.Command, e *env, o runOptions, args []string) error {
	ctx := cmd.Context()
	runOnce := func(paths []string) {
		err := runRun(cmd, e, o, paths)
		if ee := (*exitError)(nil); errors.As(err, &ee) {
			err = ee.err
		}
		if err != nil {
			fmt.Fprintln(e.stderr, "dryfire:", err)
		}
	}
	before, err := snapshot(args)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	runOnce(args)
	for {
		// What changed while the run ran counts, except what the run
		// writes itself (its reports, the cassettes it records).
		after, err := snapshot(args)
		if err != nil {
			return &exitError{code: exitInfra, err: err}
		}
		changed := ownWritesLeftOut(diff(before, after), o)
		before = after
		if len(changed) == 0 {
			fmt.Fprintf(e.stderr, "watching %s for changes (Ctrl-C stops)\n", strings.Join(args, " "))
			changed, before, err = waitForChange(ctx, args, before)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return &exitError{code: exitInfra, err: err}
			}
		}
		paths := args
		if onlySuites(changed) {
			paths = changed
		}
		fmt.Fprintf(e.stderr, "\nchanged: %s\n", strings.Join(shorten(changed, 5), ", "))
		runOnce(paths)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// snapshot is the modification time and size of every file under paths
// (hidden directories and node_modules skipped, as discovery does).
func snapshot(paths []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == p {
					return err
				}
				return nil // gone meanwhile
			}
			if d.IsDir() {
				if path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if len(out) >= maxWatched {
				return fmt.Errorf("watching %s: more than %d files; watch a smaller directory", p, maxWatched)
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			// With '/' on every OS: "changed: data/note.txt" reads the same on Windows.
			out[filepath.ToSlash(path)] = fmt.Sprintf("%d %d", info.ModTime().UnixNano(), info.Size())
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// waitForChange polls until the files under paths differ from before and
// have then been quiet a moment; it returns the changed files, sorted.
func waitForChange(ctx context.Context, paths []string, before map[string]string) ([]string, map[string]string, error) {
	var last map[string]string
	var seen time.Time
	for {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(watchEvery):
		}
		now, err := snapshot(paths)
		if err != nil {
			return nil, nil, err
		}
		if diff(before, now) == nil {
			last = nil
			continue
		}
		if last == nil || diff(last, now) != nil {
			last, seen = now, time.Now()
			continue
		}
		if time.Since(seen) >= watchQuiet {
			return diff(before, now), now, nil
		}
	}
}

// ownWritesLeftOut is changed without the files a run writes itself: its
// --json and --junit reports and cassettes (under a cassettes directory).
func ownWritesLeftOut(changed []string, o runOptions) []string {
	var out []string
	for _, f := range changed {
		c := filepath.Clean(f)
		if o.jsonOut != "" && c == filepath.Clean(o.jsonOut) || o.junitOut != "" && c == filepath.Clean(o.junitOut) {
			continue
		}
		if slices.Contains(strings.Split(filepath.ToSlash(c), "/"), "cassettes") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// diff lists the files added, removed or changed from a to b, sorted.
func diff(a, b map[string]string) []string {
	var out []string
	for k, v := range b {
		if a[k] != v {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// onlySuites reports whether every changed file is a suite file that
// still exists.
func onlySuites(files []string) bool {
	for _, f := range files {
		if !strings.HasSuffix(f, ".dryfire.yaml") && !strings.HasSuffix(f, ".dryfire.yml") {
			return false
		}
		if _, err := os.Stat(f); err != nil {
			return false
		}
	}
	return len(files) > 0
}

func shorten(files []string, n int) []string {
	if len(files) <= n {
		return files
	}
	return append(slices.Clone(files[:n]), fmt.Sprintf("and %d more", len(files)-n))
}
