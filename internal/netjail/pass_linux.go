//go:build linux

package netjail

// Passing (agent.network: report): the namespace's programs still reach
// the network, through dryfire. A BPF sk_lookup program attached to the
// namespace hands every TCP connection (to any address and port but
// dryfire's own listener) to one listener inside; dryfire accepts it,
// reads where it was going (the accepted socket's local address), and
// makes that connection again from the machine's own network, copying
// both ways. DNS queries sent to the name servers of /etc/resolv.conf
// reach a socket bound to each server's address inside (every address
// is local there) and are asked again outside. The packet socket sees
// all of it as before, so what was tried is reported the same way.
// UDP other than DNS is reported and goes nowhere.

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaxPassed bounds the connections one namespace has open through
// dryfire at once; a connection past it is closed at once.
const MaxPassed = 256

type passer struct {
	port     int
	resolver string
	lns      []net.Listener // catch-all listeners inside: IPv4, then IPv6 when there is one
	dns      []*net.UDPConn // the name servers' addresses, inside
	fds      []int          // the BPF map, program and link

	sem   chan struct{}
	mu    sync.Mutex
	conns map[io.Closer]struct{}
	wg    sync.WaitGroup
}

// setupPass runs on the namespace's thread, after setup.
func (j *Jail) setupPass(o *Options) error {
	p := &passer{port: j.ln.Addr().(*net.TCPAddr).Port, resolver: o.Resolver, sem: make(chan struct{}, MaxPassed), conns: map[io.Closer]struct{}{}}
	j.pass = p
	// Plain TCP: a socket map takes no MPTCP socket, which Go's
	// listeners are by default.
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("in the network namespace, listening for the connections to pass on: %w", err)
	}
	p.lns = append(p.lns, ln)
	if ln6, err := lc.Listen(context.Background(), "tcp6", "[::1]:0"); err == nil {
		p.lns = append(p.lns, ln6)
	}
	if err := p.steer(); err != nil {
		return fmt.Errorf("network: report needs a BPF sk_lookup program (Linux 5.9 or later, root or CAP_BPF), and loading it failed: %w", err)
	}
	servers := nameServers("/etc/resolv.conf")
	if len(servers) == 0 {
		servers = []net.IP{net.IPv4(127, 0, 0, 1)} // the C library's default
	}
	for _, ns := range servers {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ns, Port: 53})
		if err != nil {
			continue // an IPv6 server without IPv6 here: its lookups are reported, not passed
		}
		p.dns = append(p.dns, c)
	}
	for _, ln := range p.lns {
		p.wg.Go(func() { p.acceptLoop(ln) })
	}
	for _, c := range p.dns {
		p.wg.Go(func() { p.dnsLoop(c) })
	}
	return nil
}

// close ends the passing: the listeners, every passed connection, the
// BPF objects; it returns once every copy has ended.
func (p *passer) close() {
	for _, ln := range p.lns {
		ln.Close()
	}
	for _, c := range p.dns {
		c.Close()
	}
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
	for _, fd := range p.fds {
		syscall.Close(fd)
	}
}

// track keeps c for close; false when the jail is closing.
func (p *passer) track(cs ...io.Closer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *passer) untrack(cs ...io.Closer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		c.Close()
	}
}

func (p *passer) acceptLoop(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !p.spawn(func() { p.passTCP(c) }) {
			c.Close() // over MaxPassed
		}
	}
}

// spawn runs f in a goroutine of its own unless MaxPassed are running;
// false: it did not.
func (p *passer) spawn(f func()) bool {
	select {
	case p.sem <- struct{}{}:
	default:
		return false
	}
	p.wg.Go(func() {
		defer func() { <-p.sem }()
		f()
	})
	return true
}

// passTCP makes c's connection again from outside and copies both ways
// until both sides are done.
func (p *passer) passTCP(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
	to := in.LocalAddr().String() // where the program was going
	out, err := net.DialTimeout("tcp", to, 10*time.Second)
	if err != nil {
		if tc, ok := in.(*net.TCPConn); ok {
			tc.SetLinger(0) // a reset, as the refused connection outside would be
		}
		p.untrack(in)
		return
	}
	if !p.track(out) {
		out.Close()
		p.untrack(in)
		return
	}
	half := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { half(out, in) })
	wg.Go(func() { half(in, out) })
	wg.Wait()
	p.untrack(in, out)
}

// dnsLoop answers the queries sent to one name server's address inside
// with what it (or the Resolver) answers outside.
func (p *passer) dnsLoop(c *net.UDPConn) {
	server := cmp.Or(p.resolver, c.LocalAddr().String())
	buf := make([]byte, 1<<16)
	for {
		n, from, err := c.ReadFromUDP(buf)
		if err != nil {
			return
		}
		q := append([]byte(nil), buf[:n]...)
		p.spawn(func() {
			out, err := net.Dial("udp", server)
			if err != nil || !p.track(out) {
				if out != nil {
					out.Close()
				}
				return
			}
			defer p.untrack(out)
			out.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := out.Write(q); err != nil {
				return
			}
			ans := make([]byte, 1<<16)
			m, err := out.Read(ans)
			if err != nil {
				return
			}
			c.WriteToUDP(ans[:m], from)
		})
	}
}

// nameServers are the IP addresses of a resolv.conf's nameserver lines
// (at most three, as the C library reads).
func nameServers(path string) []net.IP {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []net.IP
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() && len(out) < 3 {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			if ip := net.ParseIP(strings.Split(fields[1], "%")[0]); ip != nil {
				out = append(out, ip)
			}
		}
	}
	return out
}

// The BPF side: a socket map holding the catch-all listeners, and an
// sk_lookup program that hands them every TCP connection but dryfire's.

const (
	bpfMapCreate    = 0
	bpfMapUpdate    = 2
	bpfProgLoad     = 5
	bpfLinkCreate   = 28
	mapTypeSockmap  = 15
	progTypeLookup  = 30
	attachSkLookup  = 36
	helperLookup    = 1
	helperSkRelease = 86
	helperSkAssign  = 124
)

func bpf(cmd int, attr []byte) (int, error) {
	r, _, e := syscall.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(unsafe.Pointer(&attr[0])), uintptr(len(attr)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// pinned is n zero bytes on the heap, where Go never moves them: the
// memory a bpf attribute points at.
//
//go:noinline
func pinned(n int) []byte { return make([]byte, n) }

// addr is b's address, for a bpf attribute; b must be pinned.
func addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

// steer loads the program and attaches it to the calling thread's
// network namespace.
func (p *passer) steer() error {
	mattr := pinned(72)
	binary.NativeEndian.PutUint32(mattr[0:], mapTypeSockmap)
	binary.NativeEndian.PutUint32(mattr[4:], 4)  // key: u32
	binary.NativeEndian.PutUint32(mattr[8:], 8)  // value: a socket's fd, u64
	binary.NativeEndian.PutUint32(mattr[12:], 2) // IPv4, IPv6
	smap, err := bpf(bpfMapCreate, mattr)
	if err != nil {
		return fmt.Errorf("creating the socket map: %w", err)
	}
	p.fds = append(p.fds, smap)
	for i, ln := range p.lns {
		rc, err := ln.(*net.TCPListener).SyscallConn()
		if err != nil {
			return err
		}
		var uerr error
		rc.Control(func(fd uintptr) {
			// key and value on the heap: the kernel reads them through
			// addresses in attr, which a moved stack would leave stale.
			kv := pinned(12)
			binary.NativeEndian.PutUint32(kv[0:], uint32(i))
			binary.NativeEndian.PutUint64(kv[4:], uint64(fd))
			uattr := pinned(32)
			binary.NativeEndian.PutUint32(uattr[0:], uint32(smap))
			binary.NativeEndian.PutUint64(uattr[8:], addr(kv[0:]))
			binary.NativeEndian.PutUint64(uattr[16:], addr(kv[4:]))
			_, uerr = bpf(bpfMapUpdate, uattr)
			runtime.KeepAlive(kv)
		})
		if uerr != nil {
			return fmt.Errorf("putting listener %d (%s) in the socket map: %w", i, ln.Addr(), uerr)
		}
	}
	insns := pinned(8 * programLen)
	copy(insns, lookupProgram(smap, p.port))
	license := pinned(16)
	copy(license, "Dual MIT/GPL")
	pattr := pinned(128)
	binary.NativeEndian.PutUint32(pattr[0:], progTypeLookup)
	binary.NativeEndian.PutUint32(pattr[4:], uint32(len(insns)/8))
	binary.NativeEndian.PutUint64(pattr[8:], addr(insns))
	binary.NativeEndian.PutUint64(pattr[16:], addr(license))
	copy(pattr[48:64], "dryfire_pass")
	binary.NativeEndian.PutUint32(pattr[68:], attachSkLookup)
	prog, err := bpf(bpfProgLoad, pattr)
	runtime.KeepAlive(insns)
	runtime.KeepAlive(license)
	if err != nil {
		return fmt.Errorf("loading the program: %w%s", err, verifierLog(pattr, insns, license))
	}
	p.fds = append(p.fds, prog)
	ns, err := syscall.Open("/proc/thread-self/ns/net", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the namespace: %w", err)
	}
	defer syscall.Close(ns)
	lattr := pinned(32)
	binary.NativeEndian.PutUint32(lattr[0:], uint32(prog))
	binary.NativeEndian.PutUint32(lattr[4:], uint32(ns))
	binary.NativeEndian.PutUint32(lattr[8:], attachSkLookup)
	link, err := bpf(bpfLinkCreate, lattr)
	if err != nil {
		return fmt.Errorf("attaching the program to the namespace: %w", err)
	}
	p.fds = append(p.fds, link)
	return nil
}

// verifierLog loads the program again with the kernel's log on, for the
// message of a load that failed.
func verifierLog(attr []byte, insns, license []byte) string {
	log := pinned(1 << 16)
	a := pinned(len(attr))
	copy(a, attr)
	binary.NativeEndian.PutUint32(a[24:], 1)
	binary.NativeEndian.PutUint32(a[28:], uint32(len(log)))
	binary.NativeEndian.PutUint64(a[32:], addr(log))
	fd, err := bpf(bpfProgLoad, a)
	runtime.KeepAlive(insns)
	runtime.KeepAlive(license)
	runtime.KeepAlive(log)
	if err == nil {
		syscall.Close(fd)
		return ""
	}
	s := strings.TrimSpace(strings.TrimRight(string(log), "\x00"))
	if s == "" {
		return ""
	}
	return " (the kernel said: " + s + ")"
}

// lookupProgram is, in BPF instructions:
//
//	if protocol != TCP: pass
//	if local_port == port && local_ip4 == 127.0.0.1: pass (dryfire's own)
//	sk = map[family == AF_INET ? 0 : 1]; if sk == nil: pass
//	sk_assign(ctx, sk, 0); sk_release(sk); pass
//
// programLen is its length in instructions.
const programLen = 27

func lookupProgram(smap, port int) []byte {
	type insn struct {
		code     byte
		dst, src byte
		off      int16
		imm      int32
	}
	const (
		mov64X = 0xbf // dst = src
		mov64K = 0xb7 // dst = imm
		add64K = 0x07
		ldxW   = 0x61 // dst = *(u32 *)(src + off)
		stxW   = 0x63 // *(u32 *)(dst + off) = src
		ldDW   = 0x18 // dst = imm64 (two instructions)
		jeqK   = 0x15
		jneK   = 0x55
		call   = 0x85
		exit   = 0x95
	)
	loopback := int32(binary.NativeEndian.Uint32(net.IPv4(127, 0, 0, 1).To4()))
	prog := []insn{
		0:  {mov64X, 6, 1, 0, 0},                  // r6 = ctx
		1:  {ldxW, 2, 6, 12, 0},                   // r2 = protocol
		2:  {jneK, 2, 0, 22, syscall.IPPROTO_TCP}, // → 25
		3:  {ldxW, 2, 6, 60, 0},                   // r2 = local_port
		4:  {jneK, 2, 0, 2, int32(port)},          // → 7
		5:  {ldxW, 2, 6, 40, 0},                   // r2 = local_ip4
		6:  {jeqK, 2, 0, 18, loopback},            // → 25
		7:  {ldxW, 2, 6, 8, 0},                    // r2 = family
		8:  {mov64K, 3, 0, 0, 0},                  // r3 = 0
		9:  {jeqK, 2, 0, 1, syscall.AF_INET},      // → 11
		10: {mov64K, 3, 0, 0, 1},                  // r3 = 1
		11: {stxW, 10, 3, -4, 0},                  // key = r3
		12: {ldDW, 1, 1, 0, int32(smap)},          // r1 = the map (src 1: a map's fd)
		13: {0, 0, 0, 0, 0},                       //
		14: {mov64X, 2, 10, 0, 0},                 // r2 = &key
		15: {add64K, 2, 0, 0, -4},                 //
		16: {call, 0, 0, 0, helperLookup},         // r0 = map_lookup_elem(map, &key)
		17: {jeqK, 0, 0, 7, 0},                    // → 25
		18: {mov64X, 7, 0, 0, 0},                  // r7 = sk
		19: {mov64X, 1, 6, 0, 0},                  //
		20: {mov64X, 2, 7, 0, 0},                  //
		21: {mov64K, 3, 0, 0, 0},                  //
		22: {call, 0, 0, 0, helperSkAssign},       // sk_assign(ctx, sk, 0)
		23: {mov64X, 1, 7, 0, 0},                  //
		24: {call, 0, 0, 0, helperSkRelease},      // sk_release(sk)
		25: {mov64K, 0, 0, 0, 1},                  // r0 = SK_PASS
		26: {exit, 0, 0, 0, 0},                    //
	}
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = append(out, in.code, in.dst|in.src<<4)
		out = binary.NativeEndian.AppendUint16(out, uint16(in.off))
		out = binary.NativeEndian.AppendUint32(out, uint32(in.imm))
	}
	return out
}
