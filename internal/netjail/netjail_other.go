//go:build !linux

package netjail

import (
	"errors"
	"net"
	"os/exec"
)

// Jail is a network namespace: Linux only.
type Jail struct{}

var errNoNamespaces = errors.New("it is not supported on this OS: network namespaces and the sandbox (bubblewrap) are Linux's; use network: open here")

// Available says why a namespace cannot be made here.
func Available() error { return errNoNamespaces }

// New fails: no namespaces here.
func New(int, *Options) (*Jail, error) { return nil, errNoNamespaces }

// Options say how a jail treats what its programs try.
type Options struct {
	Pass     bool
	Resolver string
	Sandbox  bool
	Read     []string
}

func (*Jail) Listener() net.Listener    { return nil }
func (*Jail) Start(cmd *exec.Cmd) error { return errNoNamespaces }
func (*Jail) Close() []Attempt          { return nil }
func (*Jail) Confined() []string        { return nil }
