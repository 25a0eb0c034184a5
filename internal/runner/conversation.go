package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// EnvConversation tells an agent.command program that its case is a
// conversation (a case with user:), and in which protocol: "jsonl". The
// program reads each user message as one JSON line on standard input,
// {"turn": N, "text": "..."}, and answers each with one JSON line on
// standard output, {"text": "..."}; standard input closes when the user
// has nothing more to say, and the program then exits.
const EnvConversation = "DRYFIRE_CONVERSATION"

// lineWriter splits what a program writes on standard output into lines,
// each bounded by max bytes; it never blocks the program.
type lineWriter struct {
	max int

	mu      sync.Mutex
	partial []byte
	lines   []string
	err     error         // a line too long, or too many lines
	ready   chan struct{} // closed and replaced when a line arrives
	maxKept int
}

func newLineWriter(max, maxLines int) *lineWriter {
	return &lineWriter{max: max, maxKept: maxLines, ready: make(chan struct{})}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 && w.err == nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			i = len(p)
		}
		w.partial = append(w.partial, p[:i]...)
		switch {
		case len(w.partial) > w.max:
			w.err = fmt.Errorf("a line of its standard output is longer than %d MiB", w.max>>20)
		case i == len(p):
			return n, nil // the line goes on in a later write
		case len(w.lines) >= w.maxKept:
			w.err = fmt.Errorf("it wrote more than %d lines on standard output without being asked", w.maxKept)
		default:
			w.lines = append(w.lines, strings.TrimSuffix(string(w.partial), "\r"))
			w.partial = w.partial[:0]
			close(w.ready)
			w.ready = make(chan struct{})
		}
		p = p[min(i+1, len(p)):]
	}
	return n, nil
}

// next takes the first line not taken yet; ok false when there is none,
// with the channel that is closed when one arrives.
func (w *lineWriter) next() (line string, ok bool, ready <-chan struct{}, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lines) > 0 {
		line = w.lines[0]
		w.lines = w.lines[1:]
		return line, true, nil, nil
	}
	return "", false, w.ready, w.err
}

// rest is what the program wrote after its last line, if anything.
func (w *lineWriter) rest() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.partial)
}

// converse holds a conversation with a started program: it sends the
// user's messages on stdin and reads the program's replies from out,
// until the user ends it (stdin closes) or the program exits (exited is
// closed) or ctx ends. turn says how many model calls the program has
// begun (each reply's ModelTurn, as arrival counts).
func converse(ctx context.Context, stdin io.WriteCloser, out *lineWriter, exited <-chan struct{}, user *simUser, input string, turn func() int) ([]agent.Exchange, error) {
	defer stdin.Close()
	conv := []agent.Exchange{{User: input}}
	send := func(n int, text string) error {
		line, _ := json.Marshal(struct {
			Turn int    `json:"turn"`
			Text string `json:"text"`
		}{n, text})
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			// A program that has just exited closed its end first: say
			// that it exited, as when it exits while dryfire waits.
			select {
			case <-exited:
				return exitedBefore(n, out)
			case <-time.After(exitGrace):
			case <-ctx.Done():
			}
			return fmt.Errorf("the agent stopped reading its standard input before turn %d: %w", n, err)
		}
		return nil
	}
	if err := send(1, input); err != nil {
		return conv, err
	}
	for {
		n := len(conv)
		reply, err := awaitReply(ctx, out, exited, n)
		if err != nil {
			return conv, err
		}
		conv[n-1].Reply, conv[n-1].ModelTurn = reply, turn()
		msg, ok, err := user.Next(ctx, reply, conv[n-1].ModelTurn)
		if err != nil || !ok {
			return conv, err
		}
		conv = append(conv, agent.Exchange{User: msg})
		if err := send(n+1, msg); err != nil {
			return conv, err
		}
	}
}

// awaitReply waits for the program's reply to turn n: one JSON line
// {"text": "..."}.
func awaitReply(ctx context.Context, out *lineWriter, exited <-chan struct{}, n int) (string, error) {
	for gone := false; ; {
		line, ok, ready, err := out.next()
		if ok {
			var r struct {
				Text *string `json:"text"`
			}
			if json.Unmarshal([]byte(line), &r) != nil || r.Text == nil {
				return "", fmt.Errorf(`the agent's reply to turn %d is not a JSON line {"text": "..."} (%s): %s`, n, EnvConversation+"=jsonl", value.Truncate(line, 200))
			}
			return *r.Text, nil
		}
		if gone {
			return "", exitedBefore(n, out)
		}
		if err != nil {
			return "", fmt.Errorf("the agent's reply to turn %d: %w", n, err)
		}
		select {
		case <-ready:
		case <-exited:
			gone = true // the last lines may have arrived with the exit: read once more
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// exitGrace is how long a failed write to a program's standard input
// waits to learn whether the program exited (then the failure is its
// exit) or only closed its standard input: more than the program
// package waits for what an exited program left holding its output open.
const exitGrace = 3 * time.Second

// exitedBefore is the error of a program that exited before it replied
// to turn n, with what it wrote after its last line.
func exitedBefore(n int, out *lineWriter) error {
	msg := fmt.Sprintf("the agent exited before it replied to turn %d", n)
	if rest := out.rest(); rest != "" {
		msg += fmt.Sprintf(" (its standard output ends without a new line: %s)", value.Truncate(rest, 200))
	}
	return errors.New(msg)
}
