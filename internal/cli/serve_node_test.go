package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/test/npm"
)

// Real MCP clients nobody here wrote, against dryfire serve as a process:
// the MCP TypeScript SDK client over stdio and streamable HTTP, and the
// official conformance suite, from e2e/node (exact versions pinned in its
// package-lock.json). They need node and npm: without them these tests
// skip, except in CI (CI=true), where they fail.

// nodeProject is e2e/node, with its dependencies installed.
func nodeProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "e2e", "node")
	npm.Ready(t, dir, "the Node MCP clients")
	return dir
}

// node runs a Node script in dir and fails the test, with its output,
// when it exits non-zero.
func node(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serveHTTP starts `dryfire serve SUITE --http 127.0.0.1:0` in dir and
// returns its base URL; it is stopped (SIGINT) when the test ends.
func serveHTTP(t *testing.T, dir, suite string) string {
	t.Helper()
	cmd := exec.Command("dryfire", "serve", suite, "--http", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var mu sync.Mutex
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		<-done
		if err := cmd.Wait(); err != nil {
			mu.Lock()
			t.Errorf("dryfire serve: %v\n%s", err, log.String())
			mu.Unlock()
		}
	})
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("dryfire serve did not say where it listens; standard error:\n%s", log.String())
		return ""
	}
}

func TestNodeMCPClient(t *testing.T) {
	dir := nodeProject(t)
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		node(t, dir, "mcp-client.mjs", "stdio", "dryfire", "serve", "clients.dryfire.yaml", "--stdio")
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		url := serveHTTP(t, dir, "clients.dryfire.yaml")
		node(t, dir, "mcp-client.mjs", "http", url+"/mcp")
	})
	// The stdio client again, its server a dryfire mcp-bridge per
	// session to one serve over HTTP: every check holds through the
	// bridge (notifications, errors, content), and each bridge is a
	// session of its own, with its own sequences.
	t.Run("bridge", func(t *testing.T) {
		t.Parallel()
		url := serveHTTP(t, dir, "clients.dryfire.yaml")
		node(t, dir, "mcp-client.mjs", "stdio", "dryfire", "mcp-bridge", url+"/mcp")
	})
}

// The official conformance suite, every scenario (--suite all): what
// dryfire cannot pass is in conformance-baseline.yml with the reason, and
// the suite fails both on a new failure and on a listed scenario that
// passes.
func TestNodeConformance(t *testing.T) {
	dir := nodeProject(t)
	url := serveHTTP(t, dir, "conformance.dryfire.yaml")
	out := node(t, dir, "node_modules/@modelcontextprotocol/conformance/dist/index.js", "server",
		"--url", url+"/mcp", "--suite", "all", "--expected-failures", "conformance-baseline.yml", "--output-dir", t.TempDir())
	if !strings.Contains(out, "Baseline check passed") {
		t.Errorf("conformance suite:\n%s", out)
	}
	if testing.Verbose() {
		if i := strings.Index(out, "=== SUMMARY ==="); i >= 0 {
			t.Log(out[i:])
		}
	}
}
