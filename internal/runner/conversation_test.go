package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// A program that replies and exits: dryfire's next write fails (the pipe
// is closed) a moment before it learns of the exit. Either order must be
// told as the exit.
func TestConverseWithAProgramThatLeaves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exitIn time.Duration // when the exit is known after the reply
		want   string
	}{
		{"exit known before the write", 0, "the agent exited before it replied to turn 2"},
		{"exit known after the write failed", 200 * time.Millisecond, "the agent exited before it replied to turn 2"},
		{"stdin closed, still running", time.Hour, "the agent stopped reading its standard input before turn 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			out := newLineWriter(1<<20, 10)
			exited := make(chan struct{})
			go func() { // the program: read turn 1, close stdin, reply, leave
				buf := make([]byte, 4096)
				r.Read(buf)
				// Closed before the reply: dryfire's next write comes after
				// it on every OS (under Wine it came first, into the pipe).
				r.Close()
				out.Write([]byte(`{"text": "What is your order number?"}` + "\n"))
				if tc.exitIn < time.Hour {
					time.Sleep(tc.exitIn)
					close(exited)
				}
			}()
			user := &simUser{u: &spec.User{Script: []*spec.UserTurn{{Say: "O-1"}}}, notes: new([]string), conv: []agent.Exchange{{User: "Refund my order"}}}
			conv, err := converse(context.Background(), w, out, exited, user, "Refund my order", func() int { return 1 })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if len(conv) != 2 || conv[0].Reply != "What is your order number?" || conv[1].User != "O-1" {
				t.Errorf("conversation %+v", conv)
			}
		})
	}
}
