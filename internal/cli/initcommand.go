package cli

// dryfire init --agent-command CMD: a suite for an agent the user
// already has, scripted (agent.provider: script), so that it runs
// offline at once with no key. The command came from the user: it is
// split into words as a shell would, written as double-quoted YAML
// scalars, and the file is read back as a suite and checked (its
// command is those words, it loads without errors) before it is
// written.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/engine"
	"github.com/dryfire-dev/dryfire/internal/yamlnode"
)

// commandHeader is the comment at the top of the suite for a command.
const commandHeader = `# A suite for your agent, written by ` + "`dryfire init --agent-command`" + `.
# Each case runs the command below once, in this directory, with the
# case's input on standard input (and in DRYFIRE_INPUT); what it prints
# is the case's output. provider: script answers every model call it
# makes, at OPENAI_BASE_URL (Chat Completions, Responses) or
# ANTHROPIC_BASE_URL (Messages), streamed or not, from the case's script:
# offline, with no key and no cassette.
#
#   dryfire run .              run it
#   dryfire validate .         check the file (positions, did-you-mean)
#
# Next: script the tool calls its model makes
#   script:
#     - tool_calls: [{name: lookup_order, args: {order_id: A-1}}]
#     - text: Your order A-1 has shipped.
# and check them (expect: - called: lookup_order). The agent's own tools
# (functions in its code, a framework's built-ins) run as they are: each
# call is read off its model calls and checked like any other. Tools that
# dryfire should answer instead go under tools: and mocks:, served to the
# agent at DRYFIRE_MCP_URL (MCP) and DRYFIRE_TOOLS_URL (plain HTTP: GET
# the list, POST /NAME with the arguments). A framework that makes calls
# of its own (a title, a summary) gets a turn guarded for it, optional
# when it makes it only sometimes:
#     - when: {tools: []}
#       optional: true
#       text: A title
# See docs/agents.md ("Whose tools"). To record the real model instead,
# remove provider: script and run once with a key (--record once).
`

// commandSuiteText is the suite for the command line cmd, read back and
// checked.
func commandSuiteText(file, cmd string) ([]byte, error) {
	words, err := splitCommand(cmd)
	if err != nil {
		return nil, err
	}
	command := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, w := range words {
		s := yamlnode.Scalar(w)
		s.Style = yaml.DoubleQuotedStyle
		command.Content = append(command.Content, s)
	}
	provider := yamlnode.Scalar("script")
	provider.LineComment = "# the case's script answers the model calls"
	agent := yamlnode.Mapping(
		yamlnode.KV("command", command),
		yamlnode.KV("provider", provider),
		yamlnode.KV("timeout_s", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "60"}),
	)
	text := "Hello! I am the scripted model."
	kase := yamlnode.Mapping(
		yamlnode.KV("name", yamlnode.Scalar("the agent answers with the model's text")),
		yamlnode.KV("input", yamlnode.Scalar("Hello! What can you do?")),
		yamlnode.KV("script", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{
			yamlnode.Mapping(yamlnode.KV("text", yamlnode.Scalar(text))),
		}}),
		yamlnode.KV("expect", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{
			yamlnode.Mapping(yamlnode.KV("output", yamlnode.Flow(map[string]any{"contains": "the scripted model"}))),
		}}),
	)
	doc := yamlnode.Mapping(
		yamlnode.KV("version", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"}),
		yamlnode.KV("name", yamlnode.Scalar("my agent")),
		yamlnode.KV("agent", agent),
		yamlnode.KV("cases", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{kase}}),
	)
	body, err := yamlnode.Encode(doc)
	if err != nil {
		return nil, fmt.Errorf("writing the suite for %q: %w", cmd, err)
	}
	data := append([]byte(commandHeader+"#\n# The command, as given: "+yamlnode.CommentText(cmd)+"\n"), body...)
	// Read back as a suite: it loads without errors, and its command is
	// the words meant.
	got, ok, diags := engine.CheckSuite(file, data)
	if !ok {
		return nil, fmt.Errorf("writing the suite for %q: %w: %v", cmd, yamlnode.ErrNotMeant, diags)
	}
	if !slices.Equal(got, words) {
		return nil, fmt.Errorf("writing the suite for %q: %w: its command reads back as %q", cmd, yamlnode.ErrNotMeant, got)
	}
	return data, nil
}

// splitCommand splits a command line into words as a POSIX shell does
// for a simple command, without expansions: blanks separate words; '...'
// is literal; "..." is literal but for \" \\ \$ \` and a line
// continuation; a backslash outside quotes quotes the next character.
func splitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false // a word has begun (it may be empty: "")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("the command has a ' that is not closed")
			}
			w.WriteString(s[i+1 : i+1+j])
			i, in = i+1+j, true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`the command has a " that is not closed`)
			}
			in = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					w.WriteByte(s[i])
				}
			}
			in = true
		case strings.IndexByte("|&;<>()`$", c) >= 0:
			return nil, fmt.Errorf("the command has %q, which is shell syntax: agent.command runs one program with its arguments, not a shell; for a shell, say so: --agent-command \"sh -c '...'\"", string(c))
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New(`the command is empty; e.g. --agent-command "python3 agent.py"`)
	}
	return words, nil
}
