package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// kernelKnobs tell the agent the machine's namespaces and the kernel
// files it could act on the machine through (issue 36, hole 1), each one
// this test can open for writing (a block device: for reading) outside.
func kernelKnobs(t *testing.T) []string {
	ino := func(kind string) string {
		st, err := os.Stat("/proc/self/ns/" + kind)
		if err != nil {
			t.Skip(err)
		}
		return fmt.Sprint(st.Sys().(*syscall.Stat_t).Ino)
	}
	env := []string{"TEST_HOST_UTS=" + ino("uts"), "TEST_HOST_IPC=" + ino("ipc")}
	first := func(key string, flag int, paths ...string) {
		for _, p := range paths {
			if f, err := os.OpenFile(p, flag, 0); err == nil {
				f.Close()
				env = append(env, key+"="+p)
				return
			}
		}
		t.Logf("no %s here: that try proves nothing", key)
	}
	first("TEST_SYS_FILE", os.O_WRONLY, "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/profiling", "/sys/power/state", "/sys/kernel/uevent_helper")
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/cgroup.procs")
	first("TEST_CGROUP_FILE", os.O_WRONLY, append([]string{"/sys/fs/cgroup/cgroup.procs"}, cgroups...)...)
	var disks []string
	if ents, err := os.ReadDir("/sys/block"); err == nil {
		for _, e := range ents {
			disks = append(disks, "/dev/"+e.Name())
		}
	}
	first("TEST_BLOCK_DEVICE", os.O_RDONLY, disks...)
	return env
}

// tmpfsAt mounts a small tmpfs at dir (root only), unmounted when the
// test ends; false where it cannot.
func tmpfsAt(t *testing.T, dir string) bool {
	if syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m") != nil {
		return false
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return true
}
