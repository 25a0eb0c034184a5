package cli

import (
	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire/schema"
)

func newSchemaCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the suite format",
		Long: `Print the JSON Schema (2020-12) of *.dryfire.yaml files: the schema
validate applies, for editors and other tools. With yaml-language-server,
point a suite at it with a first line such as

  # yaml-language-server: $schema=./suite.schema.json`,
		Example: `  dryfire schema > suite.schema.json`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := e.stdout.Write(schema.Suite)
			return err
		},
	}
}
