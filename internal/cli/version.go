package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Commit is the VCS revision dryfire was built from, set at build time
// with -ldflags "-X .../internal/cli.Commit=REV" (scripts/release.sh);
// empty: the revision the Go toolchain stamped, if any.
var Commit = ""

// commit is the revision of this build and whether its tree had changes
// (only known from the toolchain's stamp); "unknown" when neither says.
func commit() string {
	if Commit != "" {
		return Commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, modified := vcs(bi)
	if rev == "" {
		return "unknown"
	}
	return rev + modified
}

// vcs is the revision a build was made from, and "+modified" when the
// tree was.
func vcs(bi *debug.BuildInfo) (rev, modified string) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	return rev, modified
}

func newVersionCommand(*env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the target of this dryfire",
		Long: `Print the version, the commit it was built from and the target it was
built for (GOOS/GOARCH), one "name value" pair per line, then the Go
version. --version prints the first line alone.`,
		Example: "  dryfire version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "dryfire %s\ncommit %s\ntarget %s/%s\ngo %s\n", Version, commit(), runtime.GOOS, runtime.GOARCH, runtime.Version())
			return nil
		},
	}
}
