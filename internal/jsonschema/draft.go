package jsonschema

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// A Draft represents json-schema specification.
type Draft struct {
	version    int
	url        string
	sch        *Schema
	id         string   // property name used to represent id
	subschemas []string // where subschemas are: "not", "properties/*" (each value), "allOf/[]" (each item)

	// dryfire: the meta-schema, compiled on first use by load (upstream
	// compiles every draft's in init).
	ready atomic.Bool
}

var (
	Draft4 = &Draft{
		version: 4,
		url:     "http://json-schema.org/draft-04/schema",
		id:      "id",
		subschemas: []string{
			// type agonistic
			"definitions/*",
			"not",
			"allOf/[]",
			"anyOf/[]",
			"oneOf/[]",
			// object
			"properties/*",
			"additionalProperties",
			"patternProperties/*",
			// array
			"items",
			"items/[]",
			"additionalItems",
			"dependencies/*",
		},
	}

	Draft6 = &Draft{
		version: 6,
		url:     "http://json-schema.org/draft-06/schema",
		id:      "$id",
		subschemas: slices.Concat(Draft4.subschemas, []string{
			"propertyNames",
			"contains",
		}),
	}

	Draft7 = &Draft{
		version: 7,
		url:     "http://json-schema.org/draft-07/schema",
		id:      "$id",
		subschemas: slices.Concat(Draft6.subschemas, []string{
			"if",
			"then",
			"else",
		}),
	}

	Draft2019 = &Draft{
		version: 2019,
		url:     "https://json-schema.org/draft/2019-09/schema",
		id:      "$id",
		subschemas: slices.Concat(Draft7.subschemas, []string{
			"$defs/*",
			"dependentSchemas/*",
			"unevaluatedProperties",
			"unevaluatedItems",
			"contentSchema",
		}),
	}

	Draft2020 = &Draft{
		version: 2020,
		url:     "https://json-schema.org/draft/2020-12/schema",
		id:      "$id",
		subschemas: slices.Concat(Draft2019.subschemas, []string{
			"prefixItems/[]",
		}),
	}

	draftLatest = Draft2020
)

// dryfire: upstream compiles every draft's meta-schema in init (1.7 MB,
// 21k allocations, about half of a dryfire command's start-up); here a
// draft's is compiled by the first compile that validates against it.
var (
	metaMu       sync.Mutex
	metaCompiler *Compiler // under metaMu
)

// load compiles d's meta-schema, once.
func (d *Draft) load() {
	if d.ready.Load() {
		return
	}
	metaMu.Lock()
	defer metaMu.Unlock()
	if d.ready.Load() {
		return
	}
	if metaCompiler == nil {
		metaCompiler = NewCompiler()
		metaCompiler.AssertFormat()
	}
	d.sch = metaCompiler.MustCompile(d.url)
	d.ready.Store(true)
}

// meta is d's meta-schema (dryfire: a schema is checked against its
// draft's; a custom meta-schema's $vocabulary is not read, FORK.md).
func (d *Draft) meta() *Schema {
	d.load()
	return d.sch
}

func draftFromURL(url string) *Draft {
	u, frag := split(url)
	if frag != "" {
		return nil
	}
	u, ok := strings.CutPrefix(u, "http://")
	if !ok {
		u, _ = strings.CutPrefix(u, "https://")
	}
	switch u {
	case "json-schema.org/schema":
		return draftLatest
	case "json-schema.org/draft/2020-12/schema":
		return Draft2020
	case "json-schema.org/draft/2019-09/schema":
		return Draft2019
	case "json-schema.org/draft-07/schema":
		return Draft7
	case "json-schema.org/draft-06/schema":
		return Draft6
	case "json-schema.org/draft-04/schema":
		return Draft4
	default:
		return nil
	}
}

func (d *Draft) getID(obj map[string]any) string {
	if d.version < 2019 {
		if _, ok := obj["$ref"]; ok {
			// All other properties in a "$ref" object MUST be ignored
			return ""
		}
	}

	id, ok := strVal(obj, d.id)
	if !ok {
		return ""
	}
	id, _ = split(id) // ignore fragment
	return id
}
