package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
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

// A program's transcript joins the model's calls to the calls dryfire
// served for them, never to the simulated user's (dual control): the
// user looked the order up first, with the very arguments the model then
// asked for, and stays the user's, placed after the reply it followed.
func TestTranscriptLeavesTheUsersCalls(t *testing.T) {
	args := `{"order_id":"A-7"}`
	parsed := map[string]any{"order_id": "A-7"}
	served := []tool.Record{
		{Call: tool.Call{Name: "lookup_order", Args: args, Turn: 1, Actor: "customer"}, Args: parsed},
		{Call: tool.Call{Name: "lookup_order", Args: args, Turn: 2}, Args: parsed},
	}
	seen := []model.Seen{{Turn: 2, Calls: []tool.Call{{ID: "c1", Name: "lookup_order", Args: args}}}}
	got := transcript(served, seen, tool.NewNames([]string{"lookup_order"}, nil))
	if len(got) != 2 || got[0].Actor != "customer" || got[0].ID != "" || got[1].Actor != "" || got[1].ID != "c1" || got[1].Own {
		t.Errorf("transcript: %+v", got)
	}
}
