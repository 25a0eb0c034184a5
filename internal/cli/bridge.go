package cli

import (
	"fmt"
	"net/url"
	"os"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire/internal/engine"
)

func newMCPBridgeCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp-bridge [URL]",
		Short: "Bridge an MCP client over stdio to an MCP server over HTTP",
		Long: `Relay MCP between standard input and output (newline-delimited JSON-RPC,
as a stdio server speaks it) and a streamable HTTP MCP endpoint: URL, or
$DRYFIRE_MCP_URL. An agent that only takes an MCP server command runs this
as that command; in an agent.command case, $DRYFIRE_MCP_COMMAND is it,
bound to the case, so its calls land in the case's record, with the case's
sequences and world.

Each message read is sent as it is; every message of the answer
(notifications, then the response) is written as one line. The session the
server opens at initialize is used for every later request (one session
per bridge process: its own sequence positions) and closed when standard
input ends. A request the server cannot be reached for gets a JSON-RPC
error (-32603) saying why.`,
		Example: `  dryfire mcp-bridge http://127.0.0.1:7777/mcp
  $DRYFIRE_MCP_COMMAND      # in an agent.command program: the case's tools`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("mcp-bridge takes one URL at most, e.g. %s http://127.0.0.1:7777/mcp", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target := e.getenv("DRYFIRE_MCP_URL")
			if len(args) == 1 {
				target = args[0]
			}
			if target == "" {
				return usageErr("mcp-bridge needs the MCP endpoint's URL: give it, or set DRYFIRE_MCP_URL (an agent.command program has it)")
			}
			if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usageErr("mcp-bridge: %q is not an http:// or https:// URL", target)
			}
			if err := engine.BridgeMCP(cmd.Context(), target, e.stdin, e.stdout); err != nil {
				return &exitError{code: exitInfra, err: fmt.Errorf("mcp-bridge: %w", err)}
			}
			return nil
		},
	}
}

// selfBridge is this executable's mcp-bridge command, for agent.command
// programs; nil when the executable cannot be found.
func selfBridge() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, "mcp-bridge"}
}
