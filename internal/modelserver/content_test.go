package modelserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// recordedDir records the 3-turn conversation of f against its fake into
// a fresh directory and returns the directory and the answers.
func recordedDir(t *testing.T, f flavour) (string, []reply) {
	t.Helper()
	dir := t.TempDir()
	fake := newFake(f.api)
	got := record(t, upstreamOptions(caseOptions(dir, cassette.Once), fake.URL), f)
	fake.Close()
	return dir, got
}

// Eight clients replay the same conversation at once, each turn many
// times: answered by content, each gets the recorded bytes of the turn it
// asked for, whatever order the requests arrive in. (In order, the second
// client's first request would be taken for request 2.)
func TestByContentConcurrentClients(t *testing.T) {
	for _, f := range flavours {
		t.Run(f.String(), func(t *testing.T) {
			dir, want := recordedDir(t, f)
			o := caseOptions(dir, cassette.None)
			o.ByContent = true
			e := mustNew(t, o)
			if !e.ByContent() {
				t.Fatal("ByContent() is false")
			}
			root := serve(t, e, "")
			conv := conversation(f.api, f.stream)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
			var wg sync.WaitGroup
			for c := range 8 {
				wg.Go(func() {
					for round := range 10 {
						for i := range conv {
							k := (i + c + round) % len(conv) // every order
							r := post(t, client, root, f.api, conv[k])
							if r.status != 200 || !bytes.Equal(r.body, want[k].body) {
								t.Errorf("client %d, turn %d: %d\n%.300s", c, k+1, r.status, r.body)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			if n := len(e.Calls()); n != 8*10*3 {
				t.Errorf("%d calls noted, want %d", n, 8*10*3)
			}
			if e.Turns() != 240 || e.Unplayed() != nil || e.Problem() != nil {
				t.Errorf("turns %d, unplayed %v, problem %v", e.Turns(), e.Unplayed(), e.Problem())
			}
		})
	}
}

// A request no interaction answers is refused with the closest one and
// the first difference, in the API's own shape; it changes nothing for
// the requests after it.
func TestByContentMiss(t *testing.T) {
	f := flavour{wire.OpenAIChat, false}
	dir, want := recordedDir(t, f)
	o := caseOptions(dir, cassette.None)
	o.ByContent = true
	e := mustNew(t, o)
	root := serve(t, e, "")
	conv := conversation(f.api, f.stream)
	changed := strings.Replace(conv[1], `{\"tier\":\"gold\"}`, `{\"tier\":\"silver\"}`, 1)
	r := post(t, http.DefaultClient, root, f.api, changed)
	b := checkErrorShape(t, f.api, r, 400)
	for _, s := range []string{
		"no interaction recorded in " + o.File + " answers this model request; the closest, interaction 2 of 3, differs",
		`$.messages[3].content: recorded "{\"tier\":\"gold\"}", now "{\"tier\":\"silver\"}"`,
		"dryfire run " + o.SuiteFile + " --filter '^refund$' --record all",
	} {
		if !strings.Contains(b.Error.Message, s) {
			t.Errorf("message lacks %q:\n%s", s, b.Error.Message)
		}
	}
	if b.Error.Code == nil || *b.Error.Code != cassette.CodeMismatch || b.Error.Param == nil || *b.Error.Param != "messages[3].content" {
		t.Errorf("code %v, param %v", str(b.Error.Code), str(b.Error.Param))
	}
	for i, body := range conv {
		if r := post(t, http.DefaultClient, root, f.api, body); r.status != 200 || !bytes.Equal(r.body, want[i].body) {
			t.Errorf("turn %d after the miss: %d %s", i+1, r.status, r.body)
		}
	}
	if p := e.Problem(); p != nil {
		t.Errorf("Problem = %v", p)
	}
	// The same request in another layout, keys reordered: the same
	// interaction.
	reordered := strings.Replace(conv[0], `"model":"gpt-test",`, ``, 1)
	reordered = strings.Replace(reordered, `"tool_choice":"auto"`, `"tool_choice":"auto","model":"gpt-test"`, 1)
	if r := post(t, http.DefaultClient, root, f.api, "  "+reordered+"\n"); r.status != 200 || !bytes.Equal(r.body, want[0].body) {
		t.Errorf("reordered: %d %s", r.status, r.body)
	}
}

// A cassette edited by hand, its bodies laid out otherwise and a number
// written 120.50: still matched, by value.
func TestByContentHandEditedCassette(t *testing.T) {
	f := flavour{wire.OpenAIChat, false}
	dir, want := recordedDir(t, f)
	o := caseOptions(dir, cassette.None)
	data, err := os.ReadFile(o.File)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.ReplaceAll(string(data), "\n          ", "\n ")
	if err := os.WriteFile(o.File, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	o.ByContent = true
	e := mustNew(t, o)
	root := serve(t, e, "")
	for i, body := range conversation(f.api, f.stream) {
		if r := post(t, http.DefaultClient, root, f.api, body); r.status != 200 || !bytes.Equal(r.body, want[i].body) {
			t.Errorf("turn %d: %d %s", i+1, r.status, r.body)
		}
	}
}

// ByContent applies to replay only: with no cassette yet (mode once) the
// requests are recorded in order, as they come.
func TestByContentRecordsInOrder(t *testing.T) {
	f := flavour{wire.Anthropic, true}
	dir := t.TempDir()
	fake := newFake(f.api)
	defer fake.Close()
	o := upstreamOptions(caseOptions(dir, cassette.Once), fake.URL)
	o.ByContent = true
	e := mustNew(t, o)
	if e.ByContent() || e.Replaying() {
		t.Fatalf("ByContent %v, Replaying %v with no cassette", e.ByContent(), e.Replaying())
	}
	root := serve(t, e, "")
	for _, body := range conversation(f.api, f.stream) {
		if r := post(t, http.DefaultClient, root, f.api, body); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	if wrote, err := e.Finish(); !wrote || err != nil {
		t.Fatalf("Finish: %v, %v", wrote, err)
	}
	again := mustNew(t, o)
	if !again.ByContent() || !again.Replaying() {
		t.Errorf("with the cassette: ByContent %v, Replaying %v", again.ByContent(), again.Replaying())
	}
}

// With NoRecords, 100,000 replays keep no calls: the heap stays flat, and
// Turns and Usage still count.
func TestNoRecordsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 replays")
	}
	f := flavour{wire.OpenAIChat, true}
	dir, _ := recordedDir(t, f)
	o := caseOptions(dir, cassette.None)
	o.ByContent, o.NoRecords, o.CoalesceStreams = true, true, true
	e := mustNew(t, o)
	conv := conversation(f.api, f.stream)
	w := &discard{h: http.Header{}}
	call := func(i int) {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(conv[i%3]))
		clear(w.h)
		e.ServeHTTP(w, req)
		if w.status != 200 {
			t.Fatalf("status %d", w.status)
		}
	}
	for i := range 300 {
		call(i)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const n = 100_000
	for i := range n {
		call(i)
	}
	after := heap()
	if grew := int64(after) - int64(before); grew > 1<<20 {
		t.Errorf("the heap grew by %d bytes over %d replays", grew, n)
	}
	if len(e.Calls()) != 0 || e.Turns() != n+300 || e.Usage().OutputTokens == 0 {
		t.Errorf("calls %d, turns %d, usage %+v", len(e.Calls()), e.Turns(), e.Usage())
	}
}

// Answered by content as dryfire serve answers (streams in one write, no
// list of calls), every turn's answer is, byte for byte on the wire (the
// Date header aside), the one answered in order: the first time, when
// the request is canonicalised, and every time after, when it is found
// by its bytes.
func TestByContentWireBytes(t *testing.T) {
	for _, f := range flavours {
		t.Run(f.String(), func(t *testing.T) {
			dir, _ := recordedDir(t, f)
			inOrder := caseOptions(dir, cassette.None)
			inOrder.CoalesceStreams = true
			served := inOrder
			served.ByContent, served.NoRecords = true, true
			conv := conversation(f.api, f.stream)
			var want [][]byte
			rawTurns(t, mustNew(t, inOrder), f.api, conv, 1, func(k int, answer []byte) { want = append(want, answer) })
			rawTurns(t, mustNew(t, served), f.api, conv, 3, func(k int, answer []byte) {
				if !bytes.Equal(answer, want[k]) {
					t.Errorf("turn %d:\n%s\nin order:\n%s", k+1, answer, want[k])
				}
			})
		})
	}
}

// rawTurns sends the turns of conv to e over one raw keep-alive
// connection, times times in a row each, as an SDK sends them, and gives
// each raw answer (status line, headers but Date, body) to got.
func rawTurns(t *testing.T, e http.Handler, api wire.API, conv []string, times int, got func(k int, answer []byte)) {
	t.Helper()
	srv := httptest.NewServer(e)
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	auth := "Authorization: Bearer " + DummyKey + "\r\n"
	if api == wire.Anthropic {
		auth = "Anthropic-Version: 2023-06-01\r\nX-Api-Key: " + DummyKey + "\r\n"
	}
	for k, body := range conv {
		for range times {
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: test\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
				path(api), srv.Listener.Addr(), auth, len(body), body)
			var answer []byte
			length := -1
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(line, "Date: ") {
					answer = append(answer, line...)
				}
				if n, ok := strings.CutPrefix(line, "Content-Length: "); ok {
					length, _ = strconv.Atoi(strings.TrimSpace(n))
				}
				if line == "\r\n" {
					break
				}
			}
			if length < 0 {
				t.Fatalf("turn %d: no Content-Length:\n%s", k+1, answer)
			}
			b := make([]byte, length)
			if _, err := io.ReadFull(br, b); err != nil {
				t.Fatal(err)
			}
			got(k, append(answer, b...))
		}
	}
}
