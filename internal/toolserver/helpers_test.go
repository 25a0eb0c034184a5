package toolserver

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

// loadSuite loads a suite from testdata.
func loadSuite(t testing.TB, name string) *spec.Suite {
	t.Helper()
	file := filepath.Join("testdata", name)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, ds := spec.Parse(file, data, nil)
	if ds.HasErrors() {
		t.Fatalf("%s: %v", file, ds)
	}
	return s
}

func findCase(t testing.TB, s *spec.Suite, name string) *spec.Case {
	t.Helper()
	for _, c := range s.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %q", name)
	return nil
}

// newTestScope is the scope of testdata/support.dryfire.yaml (case "" is
// the suite's own).
func newTestScope(t testing.TB, caseName string) *Scope {
	t.Helper()
	s := loadSuite(t, "support.dryfire.yaml")
	o := ScopeOptions{Suite: s}
	if caseName != "" {
		o.Case = findCase(t, s, caseName)
		o.ID = "c1"
	}
	return NewScope(o)
}

// startServer serves srv on a loopback port until the test ends.
func startServer(t testing.TB, srv *Server) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.CloseSessions()
		hs.Close()
	})
	return hs
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
