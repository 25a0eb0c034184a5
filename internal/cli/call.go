package cli

import (
	"bytes"
	"cmp"
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
	args    string
	url     string
	actor   string
	key     string
	json    bool
	hasOpts bool // --actor or --idempotency-key given
}

func newCallCommand(e *env) *cobra.Command {
	var o callOptions
	cmd := &cobra.Command{
		Use:   "call (TOOL | PACKAGE/OPERATION) [--args JSON] [--url URL]",
		Short: "Call a tool or world operation of a running dryfire serve",
		Long: `Call the tool TOOL of a running 'dryfire serve --http' and print what it
answers on standard output (followed by a newline, unless it ends with
one): the exact text a model would receive.

PACKAGE/OPERATION calls an operation of a served world instead (POST
/ops/PACKAGE/OPERATION), with --actor and --idempotency-key carried as
actorId and idempotencyKey; it prints the output (a string verbatim,
anything else as JSON) or, for an error, the error envelope
{"error": {"code", "message", "retryable"}}, which is also what a model
receives. --actor or --idempotency-key with a tool name calls the
operation behind that tool. --json prints the whole answer of /ops
({"status", "output", "error", "receipt"}) instead.

The arguments are a JSON object (default {}); --args - reads them from
standard input. The server is $DRYFIRE_TOOLS_URL, or --url: the tools URL
of a server (http://127.0.0.1:7777/tools, or a case's
.../cases/ID/tools) or the server's own URL.

Exit status: 0 the tool answered a result; 1 the tool answered an error
result (an error outcome, or a call no mock rule matched: the text says
which rule came closest; for an operation, any error the world answered);
2 a usage error (no URL, arguments that are not a JSON object);
3 the server could not be reached or refused the request.`,
		Example: `  dryfire call lookup_order --args '{"order_id": "A-991"}'
  dryfire call issue_refund --url http://127.0.0.1:7777/cases/c1/tools
  echo '{"order_id": "A-991"}' | dryfire call lookup_order --args -
  dryfire call refunds/refunds.create --idempotency-key r-1 \
      --args '{"order_id": "A-991", "amount": 120}'
  dryfire call tickets/tickets.escalate --actor supervisor`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("call needs one tool name (or package/operation), e.g. %s lookup_order --args '{\"order_id\": \"A-991\"}'", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.hasOpts = cmd.Flags().Changed("actor") || cmd.Flags().Changed("idempotency-key")
			return runCall(cmd.Context(), e, o, args[0])
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.args, "args", "{}", "the arguments, a `JSON` object, or - to read them from standard input, e.g. --args '{\"order_id\": \"A-991\"}'")
	f.StringVar(&o.url, "url", "", "the server's tools `URL` (default $DRYFIRE_TOOLS_URL), e.g. --url http://127.0.0.1:7777")
	f.StringVar(&o.actor, "actor", "", "world operations: call as the actor `NAME` (default the served drill's)")
	f.StringVar(&o.key, "idempotency-key", "", "world operations: the idempotency `KEY` of the call")
	f.BoolVar(&o.json, "json", false, "world operations: print the whole answer, {\"status\", \"output\", \"error\", \"receipt\"}")
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
	base := cmp.Or(o.url, e.getenv("DRYFIRE_TOOLS_URL"))
	if base == "" {
		return usageErr("no server: set DRYFIRE_TOOLS_URL or pass --url, e.g. --url http://127.0.0.1:7777")
	}
	if strings.Contains(name, "/") || o.hasOpts || o.json {
		return callOp(ctx, e, o, base, name, args)
	}
	target, err := toolURL(base, name)
	if err != nil {
		return usageErr("%v", err)
	}
	code, status, body, err := send(ctx, http.MethodPost, target, args)
	if err != nil {
		return err
	}
	var out struct {
		Content *string `json:"content"`
		IsError bool    `json:"is_error"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	jsonErr := json.Unmarshal(body, &out)
	if code != http.StatusOK || jsonErr != nil || out.Content == nil {
		msg := cmp.Or(out.Error.Message, "the answer is not a dryfire tool result: "+quoteStart(body))
		return &exitError{code: exitCallUnreachable, err: fmt.Errorf("%s answered %s: %s", target, status, msg)}
	}
	printLine(e, *out.Content)
	if out.IsError {
		return &exitError{code: exitCallError}
	}
	return nil
}

// callOp calls a world operation (package/operation, or the operation
// behind a tool name) through POST /ops.
func callOp(ctx context.Context, e *env, o callOptions, base, name string, args []byte) error {
	root, err := serverURL(base)
	if err != nil {
		return usageErr("%v", err)
	}
	op := name
	if !strings.Contains(name, "/") {
		if op, err = operationOf(ctx, root, name); err != nil {
			return err
		}
	}
	env := map[string]any{"arguments": json.RawMessage(args)}
	if o.actor != "" {
		env["actorId"] = o.actor
	}
	if o.key != "" {
		env["idempotencyKey"] = o.key
	}
	body, _ := json.Marshal(env)
	target := root + "/ops/" + op
	status, _, data, err := send(ctx, http.MethodPost, target, body)
	if err != nil {
		return err
	}
	var out struct {
		Status  string          `json:"status"`
		Output  json.RawMessage `json:"output"`
		Error   json.RawMessage `json:"error"`
		Receipt bool            `json:"receipt"`
	}
	if json.Unmarshal(data, &out) != nil || (out.Status != "ok" && out.Status != "error") {
		var bad struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := "the answer is not a dryfire operation result: " + quoteStart(data)
		if json.Unmarshal(data, &bad) == nil && bad.Error.Message != "" {
			msg = bad.Error.Message
		}
		return &exitError{code: exitCallUnreachable, err: fmt.Errorf("%s answered %d: %s", target, status, msg)}
	}
	var text string
	switch {
	case o.json:
		text = string(data)
	case out.Status == "error":
		text = `{"error":` + string(out.Error) + `}`
	default:
		text = string(out.Output)
		var str string
		if json.Unmarshal(out.Output, &str) == nil {
			text = str
		}
	}
	printLine(e, text)
	if out.Status == "error" {
		return &exitError{code: exitCallError}
	}
	return nil
}

// operationOf finds the world operation behind a tool in GET /tools.
func operationOf(ctx context.Context, root, tool string) (string, error) {
	code, status, data, err := send(ctx, http.MethodGet, root+"/tools", nil)
	if err != nil {
		return "", err
	}
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Operation string `json:"operation"`
		} `json:"tools"`
	}
	if code != http.StatusOK || json.Unmarshal(data, &list) != nil {
		return "", &exitError{code: exitCallUnreachable, err: fmt.Errorf("%s/tools answered %s: %s", root, status, quoteStart(data))}
	}
	for _, t := range list.Tools {
		if t.Name == tool {
			if t.Operation == "" {
				return "", usageErr("%s is a mocked tool, not a world operation: --actor, --idempotency-key and --json are for world operations", tool)
			}
			return t.Operation, nil
		}
	}
	return "", usageErr("the server has no tool %q", tool)
}

// send sends body to target and returns the answer's status (as a code
// and as the line says it) and body.
func send(ctx context.Context, method, target string, body []byte) (int, string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, usageErr("%s: %v", target, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, &exitError{code: exitCallUnreachable, err: fmt.Errorf("cannot reach the dryfire server at %s: %v (is 'dryfire serve --http' running there?)", target, unwrapURL(err))}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", nil, &exitError{code: exitCallUnreachable, err: fmt.Errorf("reading the answer of %s: %v", target, err)}
	}
	return resp.StatusCode, resp.Status, data, nil
}

// printLine writes text to standard output, ending it with a newline.
func printLine(e *env, text string) {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	io.WriteString(e.stdout, text)
}

// serverURL is the root of a server (a case's prefix kept) from a tools
// URL or the server's own URL.
func serverURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http:// URL of a dryfire server, e.g. http://127.0.0.1:7777", base)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/tools")
	u.RawPath, u.RawQuery = "", ""
	return u.String(), nil
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
