//go:build linux

package netjail

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Jail is one network namespace, for one program run.
type Jail struct {
	port int
	ln   net.Listener // 127.0.0.1:port inside
	pkt  *os.File     // a packet socket on the namespace's loopback
	jobs chan func()  // run on the namespace's thread
	done chan struct{}

	readDone chan struct{}
	pass     *passer // network: report; nil: isolated
	confine  *confinement
	mu       sync.Mutex
	seen     tally
}

// Available says whether a namespace can be made here (nil), or why not.
func Available() error { return available() }

var available = sync.OnceValue(func() error {
	j, err := New(0, nil)
	if err == nil {
		j.Close()
	}
	return err
})

// New makes a namespace whose loopback answers on 127.0.0.1:port with
// Listener (0: a port the system picks). o may be nil: isolated.
func New(port int, o *Options) (*Jail, error) {
	j := &Jail{port: port, jobs: make(chan func()), done: make(chan struct{}), readDone: make(chan struct{}), seen: tally{}, confine: &confinement{}}
	if o != nil {
		j.confine.sandbox, j.confine.read, j.confine.write = o.Sandbox, o.Read, o.Write
	}
	ready := make(chan error, 1)
	go j.run(ready, o)
	if err := <-ready; err != nil {
		return nil, err
	}
	go j.read()
	if _, err := bwrap(); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// run is the namespace's thread: it never leaves it, and ends with it.
func (j *Jail) run(ready chan<- error, o *Options) {
	runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
	defer close(j.done)
	err := j.setup()
	if err == nil && o != nil && o.Pass {
		if err = j.setupPass(o); err != nil {
			j.pass.close()
			j.ln.Close()
			j.pkt.Close()
		}
	}
	if ready <- err; err != nil {
		return
	}
	for f := range j.jobs {
		f()
	}
}

func (j *Jail) setup() error {
	if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("making a network namespace was refused (%w): it needs root or CAP_SYS_ADMIN; run dryfire as root (as CI jobs in containers usually are), or use network: report or open", err)
		}
		return fmt.Errorf("making a network namespace: %w (the kernel needs CONFIG_NET_NS)", err)
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("in the network namespace, bringing loopback up: %w", err)
	}
	if err := allLocal(syscall.AF_INET); err != nil {
		return fmt.Errorf("in the network namespace, routing every IPv4 address to loopback: %w", err)
	}
	allLocal(syscall.AF_INET6) // without IPv6, there is nothing to route
	// Protocol 0 until bind: a socket made with ETH_P_ALL hooks every
	// packet at once, and bind then unhooks it, which waits for the
	// kernel's network to settle (about 20 ms); bound once, it is 40 µs.
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("in the network namespace, opening a packet socket to see what the program tries: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(syscall.ETH_P_ALL), Ifindex: 1}); err != nil {
		syscall.Close(fd)
		return fmt.Errorf("in the network namespace, binding the packet socket to loopback: %w", err)
	}
	j.pkt = os.NewFile(uintptr(fd), "netjail-packets")
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(j.port))
	if err != nil {
		j.pkt.Close()
		return fmt.Errorf("in the network namespace, listening on 127.0.0.1:%d: %w", j.port, err)
	}
	j.ln = ln
	return nil
}

// Listener is the namespace's 127.0.0.1:PORT, for dryfire to serve on.
func (j *Jail) Listener() net.Listener { return j.ln }

// Start starts cmd inside the namespace (cmd.Start on its thread),
// confined (confine_linux.go).
func (j *Jail) Start(cmd *exec.Cmd) error {
	filter, err := j.confine.wrap(cmd)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	j.jobs <- func() { errc <- cmd.Start() }
	err = <-errc
	if filter != nil {
		filter.Close() // bwrap has its own
	}
	return err
}

// Close ends the namespace (once its programs have exited) and returns
// what was tried in it, in a fixed order.
func (j *Jail) Close() []Attempt {
	close(j.jobs)
	<-j.done
	j.ln.Close()
	if j.pass != nil {
		j.pass.close()
	}
	j.pkt.SetReadDeadline(time.Now())
	<-j.readDone
	// Closing a packet socket waits for the kernel's network (an RCU
	// grace period: milliseconds); nothing reads it now.
	go j.pkt.Close()
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seen.sorted()
}

// read notes each packet the namespace's programs send, until the
// deadline Close sets; then what is still queued.
func (j *Jail) read() {
	defer close(j.readDone)
	rc, err := j.pkt.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 1<<16)
	for {
		var n int
		var from syscall.Sockaddr
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, from, rerr = syscall.Recvfrom(int(fd), buf, 0)
			return rerr != syscall.EAGAIN
		})
		if err != nil {
			// The deadline: take what is queued, without waiting.
			rc.Control(func(fd uintptr) {
				for {
					n, from, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
					if rerr != nil {
						return
					}
					j.packet(buf[:n], from)
				}
			})
			return
		}
		if rerr == nil {
			j.packet(buf[:n], from)
		}
	}
}

// packet notes one packet, if it was sent (not received) and tries
// something other than dryfire's listener.
func (j *Jail) packet(p []byte, from syscall.Sockaddr) {
	if ll, ok := from.(*syscall.SockaddrLinklayer); !ok || ll.Pkttype != syscall.PACKET_OUTGOING {
		return
	}
	a, ok := parse(p)
	if !ok {
		return
	}
	if a.Kind == "tcp" && a.Address == "127.0.0.1" && a.Port == j.ln.Addr().(*net.TCPAddr).Port {
		return
	}
	j.mu.Lock()
	j.seen[a]++
	j.mu.Unlock()
}

// parse reads an IPv4 or IPv6 packet: a TCP connection's first segment
// (SYN), or a UDP datagram (to port 53: a DNS query, its name read).
func parse(p []byte) (Attempt, bool) {
	var proto byte
	var dst net.IP
	var l4 []byte
	switch {
	case len(p) >= 20 && p[0]>>4 == 4:
		ihl := int(p[0]&15) * 4
		if ihl < 20 || len(p) < ihl {
			return Attempt{}, false
		}
		proto, dst, l4 = p[9], net.IP(p[16:20]), p[ihl:]
	case len(p) >= 40 && p[0]>>4 == 6:
		proto, dst, l4 = p[6], net.IP(p[24:40]), p[40:] // extension headers aside
	default:
		return Attempt{}, false
	}
	switch proto {
	case syscall.IPPROTO_TCP:
		if len(l4) < 14 {
			return Attempt{}, false
		}
		flags := l4[13]
		if flags&0x02 == 0 || flags&0x10 != 0 { // SYN without ACK: a connection begun
			return Attempt{}, false
		}
		return Attempt{Kind: "tcp", Address: dst.String(), Port: int(binary.BigEndian.Uint16(l4[2:]))}, true
	case syscall.IPPROTO_UDP:
		if len(l4) < 8 {
			return Attempt{}, false
		}
		if binary.BigEndian.Uint16(l4[0:]) == 53 {
			return Attempt{}, false // a name server's answer (network: report passes them back)
		}
		a := Attempt{Kind: "udp", Address: dst.String(), Port: int(binary.BigEndian.Uint16(l4[2:]))}
		if a.Port == 53 {
			if name, ok := dnsName(l4[8:]); ok {
				a.Kind, a.Name = "dns", name
			}
		}
		return a, true
	}
	return Attempt{}, false
}

// dnsName is the name of a DNS query's first question.
func dnsName(m []byte) (string, bool) {
	if len(m) < 12 || binary.BigEndian.Uint16(m[4:]) == 0 {
		return "", false
	}
	var name []byte
	for i := 12; i < len(m); {
		n := int(m[i])
		if n == 0 {
			if len(name) == 0 {
				return ".", true
			}
			return string(name), true
		}
		if n > 63 || i+1+n > len(m) || len(name) > 255 {
			return "", false
		}
		if len(name) > 0 {
			name = append(name, '.')
		}
		name = append(name, m[i+1:i+1+n]...)
		i += 1 + n
	}
	return "", false
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// loopbackUp sets lo up (SIOCSIFFLAGS).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// allLocal adds the route "local 0.0.0.0/0 dev lo table local" (::/0 for
// IPv6) over rtnetlink: every address is the namespace's own, so a
// connection anywhere is refused at once (nothing listens) instead of
// waiting for an answer that never comes, and its first packet shows on
// loopback.
func allLocal(family int) error {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return err
	}
	// nlmsghdr (16 bytes), rtmsg (12), one attribute RTA_OIF = 1 (lo)
	msg := make([]byte, 16+12+8)
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], syscall.RTM_NEWROUTE)
	binary.NativeEndian.PutUint16(msg[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_ACK|syscall.NLM_F_CREATE|syscall.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	rt := msg[16:]
	rt[0] = byte(family)
	rt[4] = syscall.RT_TABLE_LOCAL
	rt[5] = syscall.RTPROT_BOOT
	rt[6] = syscall.RT_SCOPE_HOST
	rt[7] = syscall.RTN_LOCAL
	binary.NativeEndian.PutUint16(msg[28:], 8)
	binary.NativeEndian.PutUint16(msg[30:], syscall.RTA_OIF)
	binary.NativeEndian.PutUint32(msg[32:], 1)
	if err := syscall.Sendto(fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	if n >= 20 && binary.NativeEndian.Uint16(buf[4:]) == syscall.NLMSG_ERROR {
		if e := int32(binary.NativeEndian.Uint32(buf[16:])); e != 0 {
			return syscall.Errno(-e)
		}
	}
	return nil
}
