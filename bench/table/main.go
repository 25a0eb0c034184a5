// Command table prints the serving and start-up table of docs/performance.md
// (issue 31) by one method, so that every figure in a note is taken the
// same way:
//
//   - every server is up at once, each pinned to one core (-server-core)
//     with GOMAXPROCS=1: dryfire serve for each workload, a bare net/http
//     handler (bench/bare) for each answer, serving the bytes dryfire
//     answered, the go-sdk's own MCP server on the same tool (bench/gosdk)
//     and, with -node-modules, the MCP TypeScript SDK's; and a bare
//     handler with serve's read timeouts (bench/bare -timeouts), the limit
//     of a server that bounds reading its requests as serve does;
//   - the load client (bench/load: closed loop, -c connections) runs pinned
//     to the other core (-load-core), hitting each server in turn;
//   - -rounds interleaved rounds: the bare handlers, then every server (in
//     an order that turns each round), then the bare handlers again (the
//     next round's first), each measured for -d after -warmup; a share is
//     a server's requests/s over its bare handler's, the mean of the bare
//     figures just before and just after its round;
//   - start-up: in each round -starts runs each of a hello-world Go binary
//     (bench/hello), `dryfire --version` and `dryfire run` of a one-case
//     suite, interleaved; a round's figure is its median, its ratio the
//     median over hello's median; then one `dryfire run` of 500 cases;
//   - the table gives the median across rounds and the per-round range.
//
// The load average is printed before and after. Everything is built into
// a temporary directory, removed at the end (-keep keeps it), as the
// release is built (static, CGO_ENABLED=0).
//
//	go run ./bench/table                          # 13 rounds of 3 s (about 9 minutes)
//	go run ./bench/table -rounds 1 -d 500ms -check # a smoke test (CI): every row answers
//	go run ./bench/table -dryfire /tmp/old/dryfire # a prebuilt binary (before/after)
//	go run ./bench/table -write-suites DIR         # only the suites (bench/promptfoo/run.sh)
package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/bench/gensuite/suite"
)

var (
	rounds     = flag.Int("rounds", 13, "interleaved rounds")
	duration   = flag.Duration("d", 3*time.Second, "measured time of one server in a round")
	warmup     = flag.Duration("warmup", 500*time.Millisecond, "unmeasured time before each measurement")
	conns      = flag.Int("c", 8, "connections of the load client")
	serverCore = flag.Int("server-core", 0, "the core every server is pinned to")
	loadCore   = flag.Int("load-core", 1, "the core the load client is pinned to")
	starts     = flag.Int("starts", 15, "start-ups of each binary in a round")
	dryfireBin = flag.String("dryfire", "", "a prebuilt dryfire binary (default: build ./cmd/dryfire)")
	nodeMods   = flag.String("node-modules", "", "a node_modules folder with @modelcontextprotocol/sdk and zod: measure the MCP TypeScript SDK's server too")
	only       = flag.String("rows", "", "comma-separated row keys to run (tools1,tools100,replay,timeouts,mcp,mcp2026,gosdk,tssdk,start); default all")
	keep       = flag.Bool("keep", false, "keep the temporary directory")
	check      = flag.Bool("check", false, "exit 1 unless every row measured without an error (a smoke test)")
	suitesTo   = flag.String("write-suites", "", "only write the start-up suites (one.dryfire.yaml, many.dryfire.yaml) into this directory, and exit (bench/promptfoo/run.sh)")
)

// row is one served workload.
type row struct {
	key, name string
	goal      float64 // share of bare, 0 for none
	server    *proc
	bare      string // key of its bare handler
	load      []string
	rps       []float64
	share     []float64
	errs      int
}

type proc struct {
	cmd *exec.Cmd
	url string
}

var (
	tmp   string
	procs []*proc // killed at the end, and by fatalf
)

func cleanup() {
	for _, p := range procs {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
	procs = nil
	if *keep {
		log.Printf("kept %s", tmp)
	} else if tmp != "" {
		os.RemoveAll(tmp)
	}
}

func fatalf(format string, args ...any) {
	log.Printf(format, args...)
	cleanup()
	os.Exit(1)
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("bench/table: ")
	if *suitesTo != "" {
		writeSuites(*suitesTo)
		return
	}
	if runtime.GOOS != "linux" || runtime.NumCPU() < 2 {
		fatalf("needs Linux with 2 cores (servers on one, the load client on the other)")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		fatalf("needs taskset (util-linux)")
	}
	var err error
	tmp, err = os.MkdirTemp("", "dryfire-table-")
	must(err)
	code := run()
	cleanup()
	os.Exit(code)
}

func want(key string) bool {
	return *only == "" || slices.Contains(strings.Split(*only, ","), key)
}

func run() int {
	log.Printf("building into %s ...", tmp)
	bin := func(name string) string { return filepath.Join(tmp, name) }
	for _, p := range []string{"load", "bare", "setup", "gosdk", "hello"} {
		build(bin(p), "./bench/"+p)
	}
	dry := *dryfireBin
	if dry == "" {
		dry = bin("dryfire")
		build(dry, "./cmd/dryfire")
	}
	data := filepath.Join(tmp, "data")
	runCmd(bin("setup"), data)
	writeSuites(data)

	start := func(p *proc) *proc { procs = append(procs, p); return p }
	serve := func(args ...string) *proc {
		return start(startServer(data, dry, append([]string{"serve"}, append(args, "--http", "127.0.0.1:0")...), true))
	}
	const args100 = `{"amount":100,"currency":"EUR","sku":"SKU-99","note":"deliver before noon"}`
	mcpArgs := []string{"-tool", "lookup_order", "-args", `{"order_id":"A-991"}`, "-expect", "gold"}
	all := []*row{
		{key: "tools1", name: "`POST /tools`, 1 rule", goal: 0.90, bare: "tools1",
			load: []string{"-body", `{"order_id":"A-991"}`, "-expect", "gold"}},
		{key: "tools100", name: "`POST /tools`, last of 100 rules", goal: 0.90, bare: "tools100",
			load: []string{"-body", args100, "-expect", `\"rule\":99`}},
		{key: "replay", name: "model replay, chat completion (`serve --case`)", goal: 0.95, bare: "replay",
			load: []string{"-mode", "seq", "-bodies", filepath.Join(data, "chat-json.bodies.json"), "-expect", "chatcmpl"}},
		// What serve's read timeouts cost net/http (bench/bare -timeouts,
		// replay's answer): the limit of every dryfire row (its server
		// is started once replay's answer is known).
		{key: "timeouts", name: "bare net/http with serve's read timeouts (replay's answer)", bare: "replay",
			load: []string{"-mode", "seq", "-bodies", filepath.Join(data, "chat-json.bodies.json"), "-expect", "chatcmpl"}},
		{key: "mcp", name: "MCP `tools/call`, 8 sessions (2025-11-25)", goal: 0.65, bare: "mcp",
			load: append([]string{"-mode", "mcp"}, mcpArgs...)},
		{key: "mcp2026", name: "MCP `tools/call`, stateless (2026-07-28)", bare: "mcp2026",
			load: append([]string{"-mode", "mcp2026"}, mcpArgs...)},
		{key: "gosdk", name: "go-sdk's own server, same tool, 8 sessions", bare: "mcp",
			load: append([]string{"-mode", "mcp"}, mcpArgs...)},
		{key: "tssdk", name: "MCP TypeScript SDK's server, same tool, 8 sessions", bare: "mcp",
			load: append([]string{"-mode", "mcp"}, mcpArgs...)},
	}
	paths := map[string]string{"tools1": "/tools/lookup_order", "tools100": "/tools/create_order", "replay": "/v1/chat/completions", "timeouts": "/v1/chat/completions",
		"mcp": "/mcp", "mcp2026": "/mcp", "gosdk": "", "tssdk": "/mcp"}
	var rows []*row
	for _, r := range all {
		if !want(r.key) || (r.key == "tssdk" && *nodeMods == "") {
			continue
		}
		if r.key == "timeouts" {
			if !want("replay") {
				log.Printf("row timeouts serves replay's answer: it needs the replay row")
			} else {
				rows = append(rows, r) // started below, with replay's bare handler
			}
			continue
		}
		switch r.key {
		case "tools1", "mcp", "mcp2026":
			r.server = serve("tools1.dryfire.yaml")
		case "tools100":
			r.server = serve("tools100.dryfire.yaml")
		case "replay":
			r.server = serve("chat.dryfire.yaml", "--case", "chat-json", "--record", "none")
		case "gosdk":
			r.server = start(startServer(data, bin("gosdk"), nil, false))
		case "tssdk":
			r.server = start(startNode(data))
		}
		r.load = append([]string{"-url", r.server.url + paths[r.key]}, r.load...)
		rows = append(rows, r)
	}
	byKey := func(k string) *row {
		if i := slices.IndexFunc(rows, func(r *row) bool { return r.key == k }); i >= 0 {
			return rows[i]
		}
		return nil
	}
	// A bare handler for each answer, serving the bytes dryfire answered.
	bares := map[string]*row{}
	var bareKeys []string
	for _, r := range rows {
		if _, ok := bares[r.bare]; ok {
			continue
		}
		src := cmp.Or(byKey(r.bare), r)
		if src.key != r.bare { // its dryfire row is not run: take the answer from this row's server
			log.Printf("bare handler %s: answer taken from %s", r.bare, r.key)
		}
		answer := filepath.Join(tmp, r.bare+".answer")
		if _, err := load(append(src.load, "-d", "100ms", "-warmup", "0s", "-save", answer)...); err != nil {
			log.Printf("%s: %v", src.key, err)
			return 1
		}
		flags := []string{"-body-file", answer, "-content-type", "application/json"}
		if r.bare == "mcp" {
			flags = append(flags, "-mcp")
		}
		b := &row{key: r.bare, server: start(startServer(data, bin("bare"), flags, false))}
		b.load = slices.Clone(src.load)
		b.load[1] = b.server.url + paths[r.bare]
		bares[r.bare] = b
		bareKeys = append(bareKeys, r.bare)
		if t := byKey("timeouts"); t != nil && r.bare == "replay" {
			t.server = start(startServer(data, bin("bare"), append([]string{"-timeouts"}, flags...), false))
			t.load = append([]string{"-url", t.server.url + paths[t.key]}, t.load...)
		}
	}

	version := strings.TrimSpace(string(runCmd(dry, "--version")))
	before := loadavg()
	log.Printf("load average %s; %d rounds of %v (+%v warm-up) per server, %d servers, %d bare handlers", before, *rounds, *duration, *warmup, len(rows), len(bares))
	bareRPS := map[string][]float64{} // per round boundary
	measureBare := func() {
		for _, k := range bareKeys {
			rps, err := load(bares[k].load...)
			if err != nil {
				log.Printf("bare %s: %v", k, err)
				bares[k].errs++
			}
			bareRPS[k] = append(bareRPS[k], rps)
		}
	}
	type startRow struct {
		name string
		goal float64
		args []string
		ms   []float64
		x    []float64
	}
	one := filepath.Join(data, "one.dryfire.yaml")
	many := filepath.Join(data, "many.dryfire.yaml")
	startRows := []*startRow{
		{name: "`dryfire --version`", goal: 2.5, args: []string{"--version"}},
		{name: "`dryfire run` of a one-case suite", goal: 6, args: []string{"run", one}},
	}
	var helloMS, manyMS []float64
	startErrs := 0
	measureBare()
	for round := range *rounds {
		n := len(rows)
		for i := range n {
			r := rows[(i+round)%n]
			rps, err := load(r.load...)
			if err != nil {
				log.Printf("%s: %v", r.key, err)
				r.errs++
			}
			r.rps = append(r.rps, rps)
		}
		measureBare()
		for _, r := range rows {
			b := bareRPS[r.bare]
			r.share = append(r.share, r.rps[round]/((b[round]+b[round+1])/2))
		}
		if want("start") {
			var hello []float64
			per := make([][]float64, len(startRows))
			for range *starts {
				hello = append(hello, timeRun(data, bin("hello")))
				for j, s := range startRows {
					t := timeRun(data, dry, s.args...)
					if t < 0 {
						startErrs++
					}
					per[j] = append(per[j], t)
				}
			}
			h := median(hello)
			helloMS = append(helloMS, h)
			for j, s := range startRows {
				m := median(per[j])
				s.ms = append(s.ms, m)
				s.x = append(s.x, m/h)
			}
			t := timeRun(data, dry, "run", many)
			if t < 0 {
				startErrs++
			}
			manyMS = append(manyMS, t)
		}
		log.Printf("round %d/%d done (load average %s)", round+1, *rounds, loadavg())
	}
	after := loadavg()

	fmt.Printf("%s; %s; %d cores: %s; %s UTC\n", version, runtime.Version(), runtime.NumCPU(), cpuModel(), time.Now().UTC().Format("2006-01-02 15:04"))
	fmt.Printf("servers on core %d (GOMAXPROCS=1), all up at once; load client on core %d, %d connections; %d interleaved rounds of %v each (+%v warm-up); load average before %s, after %s\n\n",
		*serverCore, *loadCore, *conns, *rounds, *duration, *warmup, before, after)
	fmt.Println("| workload | req/s, median (range) | bare req/s, median | share of bare, median (per-round range) | goal |")
	fmt.Println("|---|---:|---:|---:|---|")
	mcpRow, goRow, tsRow := byKey("mcp"), byKey("gosdk"), byKey("tssdk")
	bad := 0
	for _, r := range rows {
		b := bareRPS[r.bare]
		goal := "—"
		if r.goal > 0 {
			goal = fmt.Sprintf("≥ %.0f %% %s", 100*r.goal, mark(median(r.share) >= r.goal))
		}
		fmt.Printf("| %s | %s (%s–%s) | %s | %.0f %% (%.0f–%.0f) | %s |\n", r.name, thousands(median(r.rps)), thousands(slices.Min(r.rps)), thousands(slices.Max(r.rps)),
			thousands(median(b)), 100*median(r.share), 100*slices.Min(r.share), 100*slices.Max(r.share), goal)
		bad += r.errs
	}
	if mcpRow != nil && goRow != nil {
		// What is dryfire's and what is the SDK's: the same tool, each
		// round's figures against each other.
		x := perRound(mcpRow, goRow)
		fmt.Printf("| MCP `tools/call`: dryfire ÷ go-sdk's own server | | | %.1f× (%.1f–%.1f) | — |\n", median(x), slices.Min(x), slices.Max(x))
	}
	if mcpRow != nil && tsRow != nil {
		x := perRound(mcpRow, tsRow)
		fmt.Printf("| MCP `tools/call`: dryfire ÷ the TypeScript SDK | | | %.1f× (%.1f–%.1f) | ≥ 10× %s |\n", median(x), slices.Min(x), slices.Max(x), mark(median(x) >= 10))
	}
	for _, b := range bares {
		bad += b.errs
	}
	if want("start") {
		fmt.Printf("| hello-world Go binary, start to exit | %.2f ms (%.2f–%.2f) | | | |\n", median(helloMS), slices.Min(helloMS), slices.Max(helloMS))
		for _, s := range startRows {
			fmt.Printf("| %s | %.2f ms (%.2f–%.2f) | | %.1f× hello (%.1f–%.1f) | ≤ %.1f× %s |\n", s.name, median(s.ms), slices.Min(s.ms), slices.Max(s.ms),
				median(s.x), slices.Min(s.x), slices.Max(s.x), s.goal, mark(median(s.x) <= s.goal))
		}
		fmt.Printf("| `dryfire run` of 500 cases (one tool call, two checks each) | %.1f ms (%.1f–%.1f) | | | |\n", median(manyMS), slices.Min(manyMS), slices.Max(manyMS))
		bad += startErrs
	}
	if *check && bad > 0 {
		log.Printf("%d measurements failed", bad)
		return 1
	}
	return 0
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// load runs the load client pinned to the load core and returns its
// requests/s.
func load(args ...string) (float64, error) {
	a := []string{"-c", fmt.Sprint(*loadCore), filepath.Join(tmp, "load"), "-tsv", "-c", strconv.Itoa(*conns), "-d", duration.String(), "-warmup", warmup.String()}
	cmd := exec.Command("taskset", append(a, args...)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\t")
	if len(f) < 2 {
		return 0, fmt.Errorf("load printed %q", out)
	}
	return strconv.ParseFloat(f[1], 64)
}

var ready = regexp.MustCompile(`(http://127\.0\.0\.1:[0-9]+)`)

// startServer starts a server pinned to the server core; dryfire's
// address is read from its ready line on stderr, the others' from stdout.
func startServer(dir, bin string, args []string, dryfire bool) *proc {
	cmd := exec.Command("taskset", append([]string{"-c", fmt.Sprint(*serverCore), bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "CI=")
	out := filepath.Join(tmp, fmt.Sprintf("server-%s-%d.out", filepath.Base(bin), time.Now().UnixNano()))
	f, err := os.Create(out)
	must(err)
	defer f.Close()
	if dryfire {
		cmd.Stderr = f
	} else {
		cmd.Stdout = f
		cmd.Stderr = os.Stderr
	}
	must(cmd.Start())
	for range 400 {
		data, _ := os.ReadFile(out)
		if m := ready.FindSubmatch(data); m != nil {
			return &proc{cmd: cmd, url: string(m[1])}
		}
		time.Sleep(25 * time.Millisecond)
	}
	data, _ := os.ReadFile(out)
	cmd.Process.Kill()
	fatalf("%s %s did not say its address: %s", bin, strings.Join(args, " "), data)
	return nil
}

// perRound is a's requests/s over b's, round by round.
func perRound(a, b *row) []float64 {
	var x []float64
	for i := range a.rps {
		x = append(x, a.rps[i]/b.rps[i])
	}
	return x
}

// tsServer is the MCP TypeScript SDK's streamable HTTP server with the
// same tool, one session a client, JSON answers (as dryfire's).
const tsServer = `import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const transports = new Map();
function newServer() {
  const s = new McpServer({ name: "ts-bench", version: "1" });
  s.registerTool("lookup_order", { description: "Look up an order.", inputSchema: { order_id: z.string() } },
    async () => ({ content: [{ type: "text", text: '{"tier":"gold"}' }] }));
  return s;
}
const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  const id = req.headers["mcp-session-id"];
  let t = id && transports.get(id);
  if (!t) {
    t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true,
      onsessioninitialized: (sid) => transports.set(sid, t) });
    await newServer().connect(t);
  }
  await t.handleRequest(req, res, body);
});
httpServer.listen(0, "127.0.0.1", () => console.log("http://127.0.0.1:" + httpServer.address().port));
`

func startNode(dir string) *proc {
	nd := filepath.Join(tmp, "ts")
	must(os.MkdirAll(nd, 0o755))
	abs, err := filepath.Abs(*nodeMods)
	must(err)
	must(os.Symlink(abs, filepath.Join(nd, "node_modules")))
	script := filepath.Join(nd, "server.mjs")
	must(os.WriteFile(script, []byte(tsServer), 0o644))
	node, err := exec.LookPath("node")
	must(err)
	return startServer(dir, node, []string{script}, false)
}

// timeRun is the wall time of one run of bin, in ms; -1 if it failed.
func timeRun(dir, bin string, args ...string) float64 {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CI=", "NO_COLOR=1")
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	el := time.Since(t0)
	if err != nil {
		log.Printf("%s %s: %v: %.300s", filepath.Base(bin), strings.Join(args, " "), err, out)
		return -1
	}
	return float64(el) / float64(time.Millisecond)
}

// build builds pkg as scripts/release.sh does (CGO_ENABLED=0, -trimpath,
// stripped):
// the binary the npm and PyPI packages ship, static. (With cgo, as a plain
// go build makes it on Linux, dryfire is linked dynamically and every start
// loads libc: about 0.7 ms more.)
func build(out, pkg string) {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fatalf("go build %s: %v", pkg, err)
	}
}

func runCmd(bin string, args ...string) []byte {
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return out
}

// caseText is one case: a scripted agent making one tool call, judged by
// two checks.
const caseText = `  - name: case-%d
    input: Look up order A-991.
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: A-991}}]
      - text: Your order is gold.
    expect:
      - called: {tool: lookup_order, with: {order_id: A-991}}
      - output: {contains: gold}
`

func writeSuites(dir string) {
	for name, n := range map[string]int{"one.dryfire.yaml": 1, "many.dryfire.yaml": 500} {
		var b strings.Builder
		b.WriteString(suite.LookupHead)
		for i := range n {
			fmt.Fprintf(&b, caseText, i)
		}
		must(os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644))
	}
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func thousands(f float64) string {
	s := strconv.FormatFloat(math.Round(f), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func must(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}
