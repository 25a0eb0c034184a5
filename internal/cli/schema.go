package cli

import (
	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire/schema"
)

func newSchemaCommand(e *env) *cobra.Command {
	var worldSchema bool
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the suite format",
		Long: `Print the JSON Schema (2020-12) of *.dryfire.yaml files: the schema
validate applies, for editors and other tools. With yaml-language-server,
point a suite at it with a first line such as

  # yaml-language-server: $schema=./suite.schema.json`,
		Example: `  dryfire schema > suite.schema.json
  dryfire schema --world > world.schema.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			data := schema.Suite
			if worldSchema {
				data = schema.World
			}
			_, err := e.stdout.Write(data)
			return err
		},
	}
	cmd.Flags().BoolVar(&worldSchema, "world", false, "print the schema of world files (*.world.yaml) instead")
	return cmd
}
