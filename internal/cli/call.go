package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

type callOptions struct {
	args string
	url  string
}

// Exit codes of `dryfire call` (0: the tool answered a result).
const (
	exitCallError       = 1 // the tool answered an error result
	exitCallUnreachable = 3 // no dryfire server answered
)

func newCallCommand(e *env) *cobra.Command {
	var o callOptions
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON] [--url URL]",
		Short: "Call a tool of a running dryfire serve, for shell-driven agents",
		Long: `Call the tool TOOL of a running 'dryfire serve --http' and print what it
answers on standard output (followed by a newline, unless it ends with
one): the exact text a model would receive.

The arguments are a JSON object (default {}); --args - reads them from
standard input. The server is $DRYFIRE_TOOLS_URL, or --url: the tools URL
of a server (http://127.0.0.1:7777/tools, or a case's
.../cases/ID/tools) or the server's own URL.

Exit status: 0 the tool answered a result; 1 the tool answered an error
result (an error outcome, or a call no mock rule matched: the text says
which rule came closest); 2 a usage error (no URL, arguments that are not
a JSON object); 3 the server could not be reached or refused the request.`,
		Example: `  dryfire call lookup_order --args '{"order_id": "A-991"}'
  dryfire call issue_refund --url http://127.0.0.1:7777/cases/c1/tools
  echo '{"order_id": "A-991"}' | dryfire call lookup_order --args -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("call needs one tool name, e.g. %s lookup_order --args '{\"order_id\": \"A-991\"}'", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd.Context(), e, o, args[0])
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.args, "args", "{}", "the arguments, a `JSON` object, or - to read them from standard input, e.g. --args '{\"order_id\": \"A-991\"}'")
	f.StringVar(&o.url, "url", "", "the server's tools `URL` (default $DRYFIRE_TOOLS_URL), e.g. --url http://127.0.0.1:7777")
	return cmd
}

func runCall(ctx context.Context, e *env, o callOptions, name string) error {
	args := []byte(o.args)
	if o.args == "-" {
		var err error
		if args, err = io.ReadAll(e.stdin); err != nil {
			return usageErr("--args -: reading standard input: %v", err)
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return usageErr("--args must be a JSON object, e.g. --args '{\"order_id\": \"A-991\"}'; got %s", quoteStart(args))
	}
	base := o.url
	if base == "" {
		base = e.getenv("DRYFIRE_TOOLS_URL")
	}
	if base == "" {
		return usageErr("no server: set DRYFIRE_TOOLS_URL or pass --url, e.g. --url http://127.0.0.1:7777")
	}
	target, err := toolURL(base, name)
	if err != nil {
		return usageErr("%v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(args))
	if err != nil {
		return usageErr("%s: %v", target, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return &exitError{code: exitCallUnreachable, err: fmt.Errorf("cannot reach the dryfire server at %s: %v (is 'dryfire serve --http' running there?)", target, unwrapURL(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return &exitError{code: exitCallUnreachable, err: fmt.Errorf("reading the answer of %s: %v", target, err)}
	}
	var out struct {
		Content *string `json:"content"`
		IsError bool    `json:"is_error"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	jsonErr := json.Unmarshal(body, &out)
	if resp.StatusCode != http.StatusOK || jsonErr != nil || out.Content == nil {
		msg := out.Error.Message
		if msg == "" {
			msg = "the answer is not a dryfire tool result: " + quoteStart(body)
		}
		return &exitError{code: exitCallUnreachable, err: fmt.Errorf("%s answered %s: %s", target, resp.Status, msg)}
	}
	text := *out.Content
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	io.WriteString(e.stdout, text)
	if out.IsError {
		return &exitError{code: exitCallError}
	}
	return nil
}

// toolURL is the URL to POST a call of name to: base is a tools URL
// (…/tools) or the server's own URL, to which /tools is added.
func toolURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http:// URL of a dryfire server, e.g. http://127.0.0.1:7777", base)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/tools") {
		p += "/tools"
	}
	u.Path = p + "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// unwrapURL drops the `Post "URL":` prefix the caller already says.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func quoteStart(b []byte) string {
	const n = 60
	if len(b) > n {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b)
}
