// Package schema holds the JSON Schema of the dryfire suite format.
//
// The same file drives `dryfire validate` and editor completion through
// yaml-language-server, so the two can never disagree.
package schema

import _ "embed"

// Suite is the JSON Schema (2020-12) of a *.dryfire.yaml file.
//
//go:embed suite.schema.json
var Suite []byte

// SuiteURL is the schema's $id, under which validate registers it.
const SuiteURL = "https://dryfire.dev/schema/suite.schema.json"

// World is the JSON Schema (2020-12) of a *.world.yaml file.
//
//go:embed world.schema.json
var World []byte

// WorldURL is the world schema's $id.
const WorldURL = "https://dryfire.dev/schema/world.schema.json"
