//go:build linux

package netjail

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// listen binds a Unix socket at p until the test ends.
func listen(t *testing.T, p string) {
	t.Helper()
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

// tmpfs mounts a small filesystem of its own at a new directory (root
// only), unmounted when the test ends.
func tmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mounting a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// A socket's other names are covered too (issue 36, hole 7): its hard
// links, found by walking its filesystem, and its path seen through a
// bind mount of its directory.
func TestSocketNames(t *testing.T) {
	fsys := tmpfs(t)
	os.MkdirAll(filepath.Join(fsys, "a"), 0o755)
	os.MkdirAll(filepath.Join(fsys, "b", "c"), 0o755)
	sock := filepath.Join(fsys, "a", "s.sock")
	listen(t, sock)
	for _, l := range []string{filepath.Join(fsys, "b", "link.sock"), filepath.Join(fsys, "b", "c", "link2.sock")} {
		if err := os.Link(sock, l); err != nil {
			t.Fatal(err)
		}
	}
	got, err := socketNames([]string{sock}, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{sock, filepath.Join(fsys, "b", "c", "link2.sock"), filepath.Join(fsys, "b", "link.sock")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hard links: %q, want %q", got, want)
	}

	// The walk is bounded, and the error names its bound.
	start := time.Now()
	_, err = socketNames([]string{sock}, 3)
	if err == nil || !strings.Contains(err.Error(), "has other names (hard links), and looking for them read more than 3 directory entries (netjail.MaxSocketSearch)") {
		t.Errorf("past the bound: %v", err)
	}
	t.Logf("an error at 3 entries in %v", time.Since(start))

	// One name, seen through a bind mount of its directory.
	other := tmpfs(t)
	os.MkdirAll(filepath.Join(other, "d"), 0o755)
	single := filepath.Join(other, "d", "one.sock")
	listen(t, single)
	view := t.TempDir()
	if err := syscall.Mount(filepath.Join(other, "d"), view, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(view, syscall.MNT_DETACH) })
	got, err = socketNames([]string{single}, 100)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{single, filepath.Join(view, "one.sock")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("a bind mount: %q, want %q", got, want)
	}
}

// How long finding the hard links of a socket on the root filesystem
// takes, up to MaxSocketSearch entries: the cost of the refusal. A
// benchmark, not a test: while it runs, the hard-linked socket it makes
// keeps every other confined program of the machine from starting.
func BenchmarkSocketNamesRootFS(b *testing.B) {
	dir := b.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	if err := os.Link(sock, filepath.Join(dir, "link.sock")); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		names, err := socketNames([]string{sock}, MaxSocketSearch)
		if err == nil && len(names) != 2 {
			b.Errorf("names: %q", names)
		}
	}
}

// A program file right in a hidden directory (dryfire at /tmp/dryfire,
// the MCP bridge) is shown alone: showing its directory showed the whole
// of /tmp, every other case's workspace, and made /tmp read-only.
func TestProgramFilesInAHiddenDirectory(t *testing.T) {
	f, err := os.CreateTemp("/tmp", "dryfire-program-")
	if err != nil {
		t.Skip(err)
	}
	f.Close()
	defer os.Remove(f.Name())
	sub := t.TempDir()
	script := filepath.Join(sub, "agent.py")
	os.WriteFile(script, nil, 0o644)
	cmd := exec.Command("python3", script)
	cmd.Env = []string{`DRYFIRE_MCP_ARGV=["` + f.Name() + `","mcp-bridge"]`}
	got := programFiles(cmd, sub)
	if slices.Contains(got, "/tmp") || !slices.Contains(got, f.Name()) || !slices.Contains(got, sub) {
		t.Errorf("programFiles: %q, want %s (not /tmp) and %s", got, f.Name(), sub)
	}
}

// The cost, per confined program, of finding the machine's sockets and
// their other names where none has a hard link (the usual case).
func BenchmarkMachineSockets(b *testing.B) {
	for i := range 5 {
		ln, err := net.Listen("unix", filepath.Join(b.TempDir(), fmt.Sprint(i)))
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
	}
	for b.Loop() {
		if _, err := machineSockets(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(unixSockets())), "sockets")
}
