// Package npm installs the pinned Node projects that tests run (the
// official SDK clients, the example agents, the conformance definitions),
// so that each test package does it the same way: npm ci from the lock
// file, only when needed, and never skipped in CI.
package npm

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var mu sync.Mutex

// Ready finds node and npm and installs the pinned packages of dir (npm
// ci) when they are not installed yet, or older than its lock file.
// Without node or npm the test is skipped, except when CI is set: then
// it fails, saying that what (for example "the example agent") must run
// in CI.
func Ready(t testing.TB, dir, what string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed, and CI is set: %s must run in CI", tool, what)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Test packages run as processes at once, and several use one
	// project: one npm ci at a time in dir.
	lf, err := os.OpenFile(filepath.Join(dir, ".npm-ci.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	unlock, err := lockFile(lf)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err == nil && !installed.ModTime().Before(lock.ModTime()) {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}
