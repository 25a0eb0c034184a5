package dryfire_test

import (
	"context"
	"io"
	"testing"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/bench/gensuite/suite"
	"github.com/dryfire-dev/dryfire/report"
)

// BenchmarkRunStreamed is `dryfire run --json --junit` of a large suite
// without its loading: 4,096 cases kept as stubs (Lazy), decoded as they
// run, their results streamed to both reports and a line each printed.
func BenchmarkRunStreamed(b *testing.B) {
	const n = 4096
	for _, jsonl := range []bool{false, true} {
		b.Run(map[bool]string{false: "inline", true: "jsonl"}[jsonl], func(b *testing.B) {
			path, err := suite.Write(b.TempDir(), n, jsonl)
			if err != nil {
				b.Fatal(err)
			}
			p, err := dryfire.Load(&dryfire.LoadOptions{Lazy: true}, path)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(context.Background(), nil)
			for b.Loop() {
				stream, err := report.NewStream(io.Discard, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				printer := report.NewText(io.Discard, report.TextOptions{})
				rep, err := p.Run(context.Background(), &dryfire.RunOptions{Stream: stream, Progress: printer})
				if err != nil {
					b.Fatal(err)
				}
				if err := stream.Close(rep); err != nil {
					b.Fatal(err)
				}
				printer.Finish(rep)
				if rep.Summary.Passed != n {
					b.Fatalf("%+v", rep.Summary)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cases/s")
		})
	}
}
