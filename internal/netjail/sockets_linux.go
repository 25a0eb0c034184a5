//go:build linux

package netjail

// The machine's Unix sockets, which a confined program must not reach:
// /proc/net/unix names each socket bound on the machine's network by the
// path it was bound at, and each of its names is covered by /dev/null
// when the program starts. A socket is found by its inode, not its
// path: a hard link to it, or the path seen through another mount of
// its filesystem, connects as well (issue 36, hole 7), so those names
// are covered too.

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxSocketSearch bounds the directory entries read looking for the
// hard links of the machine's Unix sockets; past it the program does not
// start.
const MaxSocketSearch = 100_000

// machineSockets are all the names, in this mount namespace, of the Unix
// sockets bound on the machine's network.
func machineSockets() ([]string, error) { return socketNames(unixSockets(), MaxSocketSearch) }

// socketNames are the names of the sockets at paths, reading at most
// budget directory entries to find their hard links.
func socketNames(paths []string, budget int) ([]string, error) {
	limit := budget
	if len(paths) == 0 {
		return nil, nil
	}
	mounts, err := readMounts()
	if err != nil {
		return paths, nil // no mountinfo: the paths alone, as before
	}
	type inode struct{ dev, ino uint64 }
	linked := map[inode]string{} // sockets with hard links: their first path
	out := slices.Clone(paths)
	for _, p := range paths {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil {
			continue
		}
		if st.Nlink > 1 {
			linked[inode{st.Dev, st.Ino}] = p
			continue
		}
		// One name, but perhaps seen through other mounts of its
		// filesystem (a bind mount of its directory).
		m := mountOf(mounts, p)
		if m == nil || m.dev != st.Dev {
			continue
		}
		inFS := filepath.Join(m.root, rel(m.point, p))
		for _, n := range mounts {
			if n.dev == st.Dev && n != m && under(inFS, []string{n.root}) {
				out = append(out, filepath.Join(n.point, rel(n.root, inFS)))
			}
		}
	}
	// Every name of a hard-linked socket: each mount of its filesystem
	// walked, its sockets compared by inode.
	walked := map[string]bool{}
	for k, first := range linked {
		for _, n := range mounts {
			if n.dev != k.dev || walked[n.point] {
				continue
			}
			walked[n.point] = true
			if err := walkSockets(n.point, n.dev, &budget, func(p string, ino uint64) {
				if _, ok := linked[inode{n.dev, ino}]; ok {
					out = append(out, p)
				}
			}); err != nil {
				return nil, fmt.Errorf("the machine's Unix socket %s has other names (hard links), and looking for them read more than %d directory entries (netjail.MaxSocketSearch): remove the link, or use network: open", first, limit)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

var errBudget = errors.New("the budget is spent")

// walkSockets calls found for each Unix socket under dir on the
// filesystem dev (other filesystems mounted below are left out), reading
// at most *budget entries.
func walkSockets(dir string, dev uint64, budget *int, found func(path string, ino uint64)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: the program, uid 0 without capabilities, may not read it either
		}
		if *budget--; *budget < 0 {
			return errBudget
		}
		switch {
		case d.IsDir():
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) != nil || st.Dev != dev {
				return fs.SkipDir
			}
		case d.Type()&fs.ModeSocket != 0:
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) == nil && st.Dev == dev {
				found(p, st.Ino)
			}
		}
		return nil
	})
}

// mount is a line of /proc/self/mountinfo: which filesystem, what of it,
// where.
type mount struct {
	dev   uint64
	root  string // the directory of the filesystem mounted
	point string // where
}

func readMounts() ([]*mount, error) {
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*mount
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// id parent major:minor root point options ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		major, minor, ok := strings.Cut(fields[2], ":")
		ma, err1 := strconv.ParseUint(major, 10, 32)
		mi, err2 := strconv.ParseUint(minor, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		out = append(out, &mount{dev: unix.Mkdev(uint32(ma), uint32(mi)), root: unescapeMount(fields[3]), point: unescapeMount(fields[4])})
	}
	return out, sc.Err()
}

// mountOf is the mount p is on: the last (uppermost) whose point holds
// it most closely.
func mountOf(mounts []*mount, p string) *mount {
	var best *mount
	for _, m := range mounts {
		if (under(p, []string{m.point}) || m.point == "/") && (best == nil || len(m.point) >= len(best.point)) {
			best = m
		}
	}
	return best
}

// rel is p below dir ("" for dir itself), both clean.
func rel(dir, p string) string {
	if dir == "/" {
		return strings.TrimPrefix(p, "/")
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unixSockets are the paths of the Unix sockets bound in the machine's
// network namespace that exist as sockets now.
func unixSockets() []string {
	// This thread's: never a jail's (those run only their jobs), while
	// the process's main thread may be one.
	f, err := os.Open("/proc/thread-self/net/unix")
	if err != nil {
		if f, err = os.Open("/proc/net/unix"); err != nil {
			return nil
		}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		if p, ok := socketPath(sc.Text()); ok { // not unbound, nor abstract (@…: per namespace already)
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.DeleteFunc(slices.Compact(out), func(p string) bool {
		st, err := os.Lstat(p)
		return err != nil || st.Mode()&os.ModeSocket == 0
	})
}

// socketPath is the path of a line of /proc/net/unix: what follows its
// seven fields (Num RefCount Protocol Flags Type St Inode), spaces and
// all, when it is a path.
func socketPath(line string) (string, bool) {
	rest := line
	for range 7 {
		rest = strings.TrimLeft(rest, " ")
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			return "", false
		}
		rest = rest[i:]
	}
	if len(rest) < 2 || rest[0] != ' ' || rest[1] != '/' {
		return "", false
	}
	return rest[1:], true
}
