package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Windows' own forms of a path outside the project: another drive, a
// drive-relative name, the current drive's root, UNC and device paths.
// They are refused, whichever separator they are written with.
func TestConfineWindowsPathForms(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "w")
	os.MkdirAll(filepath.Join(base, "sub"), 0o755)
	os.WriteFile(filepath.Join(base, "sub", "a.star"), nil, 0o600)
	other := "D:"
	if strings.EqualFold(filepath.VolumeName(root), other) {
		other = "E:"
	}
	for _, name := range []string{
		other + `\x.yaml`, other + `/x.yaml`, other + `x.yaml`,
		`\Windows\win.ini`, `/Windows/win.ini`,
		`\\host\share\x.yaml`, `//host/share/x.yaml`,
		`\\?\C:\Windows\win.ini`, `\\.\pipe\x`, `\\.\C:\x`,
		`..\..\x`, `sub\..\..\..\x`,
	} {
		if p, err := Confine(root, base, name); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: %q, %v; want it outside the project root", name, p, err)
		}
	}
	want := filepath.Join(base, "sub", "a.star")
	upper := strings.ToUpper(want[:1]) + want[1:]
	for _, name := range []string{`sub\a.star`, `sub/a.star`, want, filepath.ToSlash(want), upper} {
		if p, err := Confine(root, base, name); err != nil || !strings.EqualFold(p, want) {
			t.Errorf("%s: %q, %v; want %q", name, p, err, want)
		}
	}
}

// A name Windows keeps for a device (nul, con, aux.yaml) is never read
// as a file: Confine finds it outside the project (its path resolves to
// the device, \\.\NUL), or else ReadFile refuses it as not a regular file.
func TestWindowsDevicesAreNotRead(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"nul", "NUL.yaml", "con", "aux.star", "sub/COM1"} {
		p, err := Confine(root, root, name)
		if errors.Is(err, ErrOutside) {
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if data, err := ReadFile(p, "behavior module", MaxData); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("%s: read %q, %v; want it refused as not a regular file", name, data, err)
		}
	}
}
