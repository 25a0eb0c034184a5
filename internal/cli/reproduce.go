package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/safeio"
)

func newReproduceCommand(e *env) *cobra.Command {
	var python string
	cmd := &cobra.Command{
		Use:   "reproduce REPORT [-- COMMAND...]",
		Short: "Re-run a report's drills from their build and seed",
		Long: `Re-run every drill (a case of a world suite) of a JSON report written by
dryfire run --json, from exactly the build and seed the report recorded:
the world, scenario, drill and per-test rules as they were then, not the
world file as it is now. The suites the report names are loaded again for
the agent side and the checks.

The agent is each suite's own: the script model's turns, or the program
of agent.command (run in the suite's directory, as in a run). With
-- COMMAND, COMMAND is the agent of every drill instead, run in the
current directory as agent.command runs a program: the drill's world as
its tools (DRYFIRE_MCP_URL, DRYFIRE_TOOLS_URL), the model base URLs
(OPENAI_BASE_URL, ANTHROPIC_BASE_URL) answered from the drill's cassette,
DRYFIRE_CASE, and the input on standard input and in DRYFIRE_INPUT.

Model calls are only replayed, never recorded (as --record none): a
request that strays from the recording ends that drill, which then
differs. Nothing is written.

For each drill it says whether the evidence and the verdict are identical
and, where not, the first differences (the evidence entry and the field).

Exit status: 0 every drill reproduced identically; 1 a drill differs; 2 a
usage error or a report or suite that cannot be read.`,
		Example: `  dryfire run examples/world --json report.json
  dryfire reproduce report.json
  dryfire reproduce report.json -- node --import tsx agent.ts`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() == 0 || len(args) == 0 {
				return usageErr("reproduce needs the JSON report of a run, e.g. dryfire reproduce report.json")
			}
			if (cmd.ArgsLenAtDash() < 0 && len(args) > 1) || cmd.ArgsLenAtDash() > 1 {
				return usageErr("reproduce takes one report, got %q", args[1])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				command = args[dash:]
				if len(command) == 0 {
					return usageErr("nothing after --: give the agent's command, e.g. dryfire reproduce report.json -- node agent.js")
				}
			}
			data, err := safeio.ReadFile(args[0], "report", safeio.Limit(safeio.MaxData))
			if err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("reading the report: %w", err)}
			}
			rs, err := dryfire.Reproduce(cmd.Context(), data, &dryfire.ReproduceOptions{Load: loadOptions(e, python), Command: command, Env: e.environ()})
			var ds dryfire.Diagnostics
			switch {
			case errors.As(err, &ds):
				printDiagnostics(e, ds)
				return &exitError{code: exitUsage, err: errors.New("the suites of the report do not load; nothing ran")}
			case err != nil:
				return &exitError{code: exitUsage, err: err}
			}
			same := 0
			for _, r := range rs {
				if r.Identical {
					same++
					fmt.Fprintf(e.stdout, "SAME  %s: %s (seed %d, %.19s)\n", r.Suite, r.Name, r.Seed, r.BuildHash)
					continue
				}
				fmt.Fprintf(e.stdout, "DIFF  %s: %s (seed %d, %.19s)\n", r.Suite, r.Name, r.Seed, r.BuildHash)
				for _, d := range r.Differences {
					fmt.Fprintf(e.stdout, "      %s\n", d)
				}
			}
			fmt.Fprintf(e.stdout, "%d identical, %d different\n", same, len(rs)-same)
			if same != len(rs) {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	addLoadFlags(cmd, e, &python)
	return cmd
}
