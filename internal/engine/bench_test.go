package engine_test

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// Benchmarks of the real binary over HTTP, as an SDK uses it:
//
//	go test ./internal/engine -run '^$' -bench . -benchtime 200x
//
// Each reports the median and the 99th percentile of its operation.

func percentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	if len(d) == 0 {
		return
	}
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[min(len(d)-1, len(d)*99/100)].Microseconds()), "p99-µs")
}

// From starting the process to reading its ready line.
func BenchmarkEngineReady(b *testing.B) {
	dir := project(b)
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		p := startEngine(b, dir)
		d = append(d, time.Since(start))
		p.stop()
	}
	percentiles(b, d)
}

// Start and end of a drill with a trivial agent (one /ops call) on a
// warm engine.
func BenchmarkDrill(b *testing.B) {
	p := startEngine(b, project(b))
	body := map[string]any{"drill": "save-record", "suite": "tests/records.dryfire.yaml"}
	p.start(body).end("", nil) // warm: the suite loaded
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		dr := p.start(body)
		dr.op("record-store/records.save", map[string]any{"id": "record-1", "text": "hello"}, "")
		if res := dr.end("ok", nil); res["verdict"] != "passed" {
			b.Fatal(res["failures"])
		}
		d = append(d, time.Since(start))
	}
	percentiles(b, d)
}

// The same drill found by name among the suites under cwd.
func BenchmarkDrillDiscovered(b *testing.B) {
	p := startEngine(b, project(b))
	body := map[string]any{"drill": "save-record"}
	p.start(body).end("", nil)
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		p.start(body).end("ok", nil)
		d = append(d, time.Since(start))
	}
	percentiles(b, d)
}

// One /ops call.
func BenchmarkOps(b *testing.B) {
	p := startEngine(b, project(b))
	dr := p.start(map[string]any{"drill": "save-record", "suite": "tests/records.dryfire.yaml"})
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		if status, ans := dr.op("record-store/records.get", map[string]any{"id": "record-0"}, ""); status != http.StatusOK {
			b.Fatal(status, ans)
		}
		d = append(d, time.Since(start))
	}
	percentiles(b, d)
}
