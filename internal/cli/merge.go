package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/report"
)

// maxReport bounds the size of a JSON report merge or --durations
// reads (1 GiB; DRYFIRE_MAX_FILE_MB replaces it).
const maxReport = 1 << 30

func newMergeCommand(e *env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "merge REPORT.json... [flags]",
		Short: "Merge the JSON reports of a run's shards or batches",
		Long: `Merge the JSON reports of the parts of one run — its shards (dryfire run
--shard I/N --json FILE, one per CI machine), its batches (dryfire run
--cases FILE --json FILE, any sets of cases a scheduler gives out), or
both — into the report the run would have written whole: the same cases
in the same order, the same summary (durations aside). It prints the
merged run as a run does in a log: one line per case, the details of
every case that did not pass, and the summary line.

It refuses, with exit 2, reports that are not a part's, parts of
different suites (their files, cases, trials, pass threshold or seed
differ) or of different builds of dryfire, a shard given twice and a
shard missing, a case in two batches and a case in none (each named;
--list names a missing case by its id).

Exit status: as dryfire run's for the merged cases: 0 every case passed;
1 a case failed, or erred through the suite or the agent; 2 the reports
do not merge (nothing written); 3 only infrastructure errors, or a report
could not be written.`,
		Example: `  dryfire merge shard-*.json --json report.json --junit junit.xml --html r.html
  dryfire merge a.json b.json c.json --json - | jq .summary
  dryfire merge batch-*.json --list list.json --json report.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("merge needs the JSON reports of the shards, e.g. dryfire merge shard-1.json shard-2.json --json report.json")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(e, o, args)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.jsonOut, "json", "", "write the merged JSON report to `FILE`, or to standard output with '-' (the text then goes to standard error)")
	f.StringVar(&o.junitOut, "junit", "", "write the merged JUnit XML report to `FILE`")
	f.StringVar(&o.htmlOut, "html", "", "write the merged HTML report to `FILE`")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "also print the checks of passing cases, each with its message")
	f.StringVar(&o.caseList, "list", "", "the run's case list, `FILE` of dryfire run --list --json: a case no batch has is named by its id, suite and name")
	return cmd
}

func runMerge(e *env, o runOptions, args []string) error {
	if err := checkReportFlags(e, o); err != nil {
		return err
	}
	reps := make([]*report.Report, len(args))
	for i, path := range args {
		r, err := readReport(path)
		if err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing merged", err)}
		}
		reps[i] = r
	}
	mo := &report.MergeOptions{}
	if o.caseList != "" {
		var err error
		if mo.List, err = readCaseList(o.caseList); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("--list: %w; nothing merged", err)}
		}
	}
	rep, err := report.Merge(reps, args, mo)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing merged", err)}
	}
	text := textWriter(e, o)
	printer := report.NewText(text, report.TextOptions{Verbose: o.verbose})
	printer.Start(len(rep.Cases))
	for i := range rep.Cases {
		printer.CaseDone(i, &rep.Cases[i])
	}
	printer.Finish(rep)
	code := runExit(rep)
	if err := writeReports(e, rep, o); err != nil {
		fmt.Fprintln(e.stderr, "dryfire:", err)
		if code == exitOK {
			code = exitInfra
		}
	}
	return exitWith(code, "")
}

// readCaseList reads the JSON of run --list --json.
func readCaseList(path string) (*report.CaseList, error) {
	data, err := safeio.ReadFile(path, "case list", safeio.Limit(maxReport))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var l report.CaseList
	if err := json.Unmarshal(data, &l); err != nil || l.Version != 1 || l.Suites == "" {
		return nil, fmt.Errorf("%s is not the JSON of dryfire run --list --json (version 1)", path)
	}
	return &l, nil
}

// readReport reads a JSON report file.
func readReport(path string) (*report.Report, error) {
	data, err := safeio.ReadFile(path, "JSON report", safeio.Limit(maxReport))
	if err != nil {
		return nil, fmt.Errorf("reading the report %s: %w", path, err)
	}
	r, err := report.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// parseShard reads --shard I/N.
func parseShard(s string) (index, count int, err error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if ok && err1 == nil && (errors.Is(err2, strconv.ErrRange) || err2 == nil && count > report.MaxShards) {
		return 0, 0, fmt.Errorf("--shard %q: %s shards is too many: a run has at most %d", s, n, report.MaxShards)
	}
	if !ok || err1 != nil || err2 != nil || count < 1 || index < 1 || index > count {
		return 0, 0, fmt.Errorf("--shard %q: want I/N, this machine's part I of N (1 <= I <= N), e.g. --shard 2/3", s)
	}
	return index, count, nil
}

// runShard reads run's --shard: I/N, or auto (auto/N) from the CI's
// variables, saying on stderr which it used.
func runShard(e *env, s string) (*dryfire.Shard, error) {
	if s != "auto" && !strings.HasPrefix(s, "auto/") {
		i, n, err := parseShard(s)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		return &dryfire.Shard{Index: i, Count: n}, nil
	}
	total := 0
	if n, ok := strings.CutPrefix(s, "auto/"); ok {
		var err error
		if total, err = strconv.Atoi(n); err != nil || total < 1 || total > report.MaxShards {
			return nil, usageErr("--shard %q: want auto/N, N the number of shards (1 to %d), e.g. --shard auto/3", s, report.MaxShards)
		}
	}
	sh, from, err := shardFromEnv(e.getenv, total)
	if err != nil {
		return nil, usageErr("--shard %s: %v; nothing ran", s, err)
	}
	fmt.Fprintf(e.stderr, "dryfire: --shard %s: shard %d/%d, from %s\n", s, sh.Index, sh.Count, from)
	return sh, nil
}

// buildID names this build of dryfire in a shard's report: the version,
// the VCS revision it was built from, or the module version it was
// installed at, and the Go version; from a modified tree or without
// either, a hash of the executable.
func buildID() string {
	id := "dryfire " + Version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return id
	}
	if Commit != "" {
		// a release build: -buildvcs=false, the commit given.
		return fmt.Sprintf("%s (%s, %s)", id, Commit, bi.GoVersion)
	}
	rev, modified := vcs(bi)
	if rev == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		// go install of a module version: the version names the code.
		return fmt.Sprintf("%s (module %s, %s)", id, bi.Main.Version, bi.GoVersion)
	}
	if rev == "" || modified != "" {
		// No revision, or a modified tree, which is not its revision:
		// name the binary itself.
		if sum := exeHash(); sum != "" {
			rev = strings.TrimPrefix(rev+modified+" ", " ") + "binary sha256:" + sum
			modified = ""
		}
	}
	if rev == "" {
		return fmt.Sprintf("%s (%s)", id, bi.GoVersion)
	}
	return fmt.Sprintf("%s (%s%s, %s)", id, rev, modified, bi.GoVersion)
}

// exeHash is the first 16 hex digits of the SHA-256 of the running
// executable; empty when it cannot be read.
func exeHash() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
