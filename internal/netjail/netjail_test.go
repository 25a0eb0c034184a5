//go:build linux

package netjail

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func ipv4(proto byte, dst string, l4 []byte) []byte {
	p := make([]byte, 20, 20+len(l4))
	p[0], p[9] = 0x45, proto
	copy(p[16:], net.ParseIP(dst).To4())
	return append(p, l4...)
}

func ipv6(next byte, dst string, l4 []byte) []byte {
	p := make([]byte, 40, 40+len(l4))
	p[0], p[6] = 0x60, next
	copy(p[24:], net.ParseIP(dst).To16())
	return append(p, l4...)
}

func tcp(port uint16, flags byte) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h[2:], port)
	h[13] = flags
	return h
}

func udp(port uint16, payload []byte) []byte {
	h := make([]byte, 8)
	binary.BigEndian.PutUint16(h[2:], port)
	return append(h, payload...)
}

func dnsQuery(labels ...string) []byte {
	m := make([]byte, 12)
	binary.BigEndian.PutUint16(m[4:], 1)
	for _, l := range labels {
		m = append(m, byte(len(l)))
		m = append(m, l...)
	}
	return append(m, 0, 0, 1, 0, 1)
}

// What a packet says was tried: a connection's SYN, a datagram, a DNS
// query's name; and what says nothing (an answer, a truncated packet).
func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    []byte
		want string // "" : nothing
	}{
		{"syn v4", ipv4(6, "93.184.216.34", tcp(443, 0x02)), "tcp 93.184.216.34:443 (0)"},
		{"syn-ack", ipv4(6, "127.0.0.1", tcp(7777, 0x12)), ""},
		{"rst", ipv4(6, "127.0.0.1", tcp(8888, 0x04)), ""},
		{"syn v6", ipv6(6, "::1", tcp(9999, 0x02)), "tcp [::1]:9999 (0)"},
		{"udp", ipv4(17, "10.0.0.9", udp(5000, []byte("hi"))), "udp 10.0.0.9:5000 (0)"},
		{"dns", ipv4(17, "10.255.255.53", udp(53, dnsQuery("registry", "npmjs", "org"))), "dns lookup of registry.npmjs.org via 10.255.255.53:53 (0)"},
		{"dns truncated", ipv4(17, "10.255.255.53", udp(53, dnsQuery("registry", "npmjs", "org")[:20])), "udp 10.255.255.53:53 (0)"},
		{"short tcp", ipv4(6, "1.2.3.4", []byte{0, 1}), ""},
		{"not ip", []byte{0x10, 0, 0}, ""},
		{"icmp", ipv4(1, "1.2.3.4", make([]byte, 8)), ""},
	} {
		a, ok := parse(tt.p)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// jailOrSkip makes a namespace, or skips where none can be made (not
// root), unless DRYFIRE_TEST_NETNS=1 asks for it.
func jailOrSkip(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("DRYFIRE_TEST_NETNS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// A program in the namespace reaches the listener and nothing else: a
// connection to another local port, to an outside address and a name
// lookup are refused at once, and each is reported.
func TestJail(t *testing.T) {
	jailOrSkip(t)
	needPython(t)
	other, err := net.Listen("tcp", "127.0.0.1:0") // listening outside: unreachable inside
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	j, err := New(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	port := j.Listener().Addr().(*net.TCPAddr).Port
	script := `
import socket, sys, time, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%d/").read().decode())
start = time.monotonic()
for target in [("127.0.0.1", %d), ("93.184.216.34", 443)]:
    try:
        socket.create_connection(target, timeout=10)
        print("reached", target)
    except OSError as e:
        print("refused", target[1], type(e).__name__)
try:
    socket.getaddrinfo("registry.npmjs.org", 443)
    print("resolved")
except OSError as e:
    print("no name", type(e).__name__)
print("slow" if time.monotonic() - start > 5 else "fast")
`
	otherPort := other.Addr().(*net.TCPAddr).Port
	out, attempts := pythonInJail(t, j, fmt.Sprintf(script, port, otherPort))
	want := "dryfire\nrefused " + strconv.Itoa(otherPort) + " ConnectionRefusedError\nrefused 443 ConnectionRefusedError\nno name gaierror\nfast\n"
	if out != want {
		t.Errorf("the program printed:\n%s\nwant:\n%s", out, want)
	}
	var got []string
	for _, a := range attempts {
		if a.Kind == "dns" {
			if a.Name != "registry.npmjs.org" || a.Count < 1 {
				t.Errorf("dns attempt %+v", a)
			}
			continue
		}
		got = append(got, a.String())
	}
	wantTCP := "tcp 127.0.0.1:" + strconv.Itoa(otherPort) + " (1)\ntcp 93.184.216.34:443 (1)"
	if strings.Join(got, "\n") != wantTCP {
		t.Errorf("attempts:\n%s\nwant:\n%s", strings.Join(got, "\n"), wantTCP)
	}
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// pythonInJail runs a Python script in j, whose listener answers
// "dryfire", and returns what it printed and what it tried past the
// namespace (j is closed).
func pythonInJail(t *testing.T, j *Jail, script string) (string, []Attempt) {
	t.Helper()
	go http.Serve(j.Listener(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("dryfire")) }))
	cmd := exec.Command("python3", "-c", script)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := j.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String(), j.Close()
}

// The cost of a namespace: made, served on, and closed.
func BenchmarkJail(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		j, err := New(0, nil)
		if err != nil {
			b.Fatal(err)
		}
		j.Close()
	}
}

// A line of /proc/net/unix: the path after the seven fields, spaces
// kept; abstract and unbound sockets have none.
func TestSocketPath(t *testing.T) {
	for line, want := range map[string]string{
		"0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/docker.sock": "/run/docker.sock",
		"0000000000000000: 00000002 00000000 00010000 0001 01 12345 /tmp/a b.sock":    "/tmp/a b.sock",
		"0000000000000000: 00000002 00000000 00010000 0001 01 12345 @abstract":        "",
		"0000000000000000: 00000003 00000000 00000000 0001 03 12345":                  "",
		"Num       RefCount Protocol Flags    Type St Inode Path":                     "",
	} {
		if got, ok := socketPath(line); got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", line, got, ok, want)
		}
	}
}
