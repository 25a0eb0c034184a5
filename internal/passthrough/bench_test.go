package passthrough

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkRoundTrip measures a passthrough call to a Python function that
// returns its input: dryfire → helper → thread → back, sequentially and 8
// calls at a time. p50-µs is the median of the sequential calls.
func BenchmarkRoundTrip(b *testing.B) {
	r, _ := newRunner(b, Options{})
	ctx := context.Background()
	req := Request{Ref: "mytools.impls:echo", Args: `{"order_id":"A-991","amount":12.5,"tags":["a","b"]}`}
	if err := r.Resolve(ctx, req.Ref); err != nil {
		b.Fatal(err)
	}
	want := `{"amount":12.5,"order_id":"A-991","tags":["a","b"]}`

	b.Run("sequential", func(b *testing.B) {
		times := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			res := r.Call(ctx, req)
			times = append(times, time.Since(start))
			if res.Content != want {
				b.Fatalf("got %+v", res)
			}
		}
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1000, "p50-µs")
	})
	b.Run("async", func(b *testing.B) {
		areq := req
		areq.Ref = "mytools.impls:aecho"
		for b.Loop() {
			if res := r.Call(ctx, areq); res.IsError {
				b.Fatalf("got %+v", res)
			}
		}
	})
	b.Run("8-way", func(b *testing.B) {
		var wg sync.WaitGroup
		work := make(chan struct{})
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					if res := r.Call(ctx, req); res.Content != want {
						b.Errorf("got %+v", res)
					}
				}
			}()
		}
		for b.Loop() {
			work <- struct{}{}
		}
		close(work)
		wg.Wait()
	})
}

// BenchmarkGoFunc is the same round trip through a registered Go function.
func BenchmarkGoFunc(b *testing.B) {
	r := New(Options{Funcs: map[string]Func{
		"go.tools:echo": func(ctx context.Context, args map[string]any) (any, error) { return args, nil },
	}})
	req := Request{Ref: "go.tools:echo", Args: `{"order_id":"A-991","amount":12.5,"tags":["a","b"]}`}
	for b.Loop() {
		if res := r.Call(context.Background(), req); res.IsError {
			b.Fatal(res)
		}
	}
}
