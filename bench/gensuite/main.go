// Command gensuite writes the large suites the scale figures are measured
// on (docs/limits.md): N cases, each a scripted agent making 3 tool calls
// that mocks answer, judged by 3 checks.
//
//	go run ./bench/gensuite -n 100000 -o /tmp/big        # big/inline.dryfire.yaml
//	go run ./bench/gensuite -n 1000000 -jsonl -o /tmp/big # big/data.dryfire.yaml + big/rows.jsonl
//
// Inline cases are written out in YAML; with -jsonl the suite has one
// from: template and each case is a row of rows.jsonl. A suite file over
// 8 MiB needs DRYFIRE_MAX_FILE_MB to be loaded.
package main

import (
	"flag"
	"log"

	"github.com/dryfire-dev/dryfire/bench/gensuite/suite"
)

func main() {
	n := flag.Int("n", 1000, "cases")
	jsonl := flag.Bool("jsonl", false, "cases from a JSON Lines file (one from: template)")
	out := flag.String("o", ".", "directory to write into")
	flag.Parse()
	if _, err := suite.Write(*out, *n, *jsonl); err != nil {
		log.Fatal(err)
	}
}
