//go:build !linux

package netjail

import (
	"net"
	"os/exec"
	"runtime"
)

// Jail is a network namespace: Linux only.
type Jail struct{}

var errNoNamespaces = OSSupport(runtime.GOOS)

// Available says why a namespace cannot be made here.
func Available() error { return errNoNamespaces }

// New fails: no namespaces here.
func New(int, *Options) (*Jail, error) { return nil, errNoNamespaces }

func (*Jail) Listener() net.Listener    { return nil }
func (*Jail) Start(cmd *exec.Cmd) error { return errNoNamespaces }
func (*Jail) Close() []Attempt          { return nil }
func (*Jail) Confined() []string        { return nil }
