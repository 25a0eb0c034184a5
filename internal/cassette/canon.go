package cassette

import (
	"bytes"

	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Rule names a canonicalisation applied to a request before it is stored
// and before it is matched. docs/cassettes.md lists them.
type Rule string

const (
	// RuleJSON parses a JSON body: key order and whitespace do not matter.
	RuleJSON Rule = "json"
	// RuleDropAuth keeps auth headers out of the match and the file: only
	// the headers that change the answer are kept.
	RuleDropAuth Rule = "drop-auth"
	// RuleOpenAIUser drops the top-level user, safety_identifier and
	// prompt_cache_key of an OpenAI request.
	RuleOpenAIUser Rule = "openai-user"
	// RuleAnthropicMetadata drops metadata.user_id of an Anthropic request
	// (and metadata itself when nothing else is left in it).
	RuleAnthropicMetadata Rule = "anthropic-metadata"
)

// AnyAPI, as Config.Provider, is a case whose requests may go to any of
// the APIs (the model endpoint that an existing agent calls): every rule
// is listed, and each request gets those of its own API, found by its
// path (Anthropic's ends in /v1/messages, Gemini's in :generateContent,
// :streamGenerateContent or :countTokens).
const AnyAPI = "any"

// RulesFor are the rules applied to a provider's requests.
func RulesFor(name string) []Rule {
	switch name {
	case AnyAPI:
		return []Rule{RuleJSON, RuleDropAuth, RuleOpenAIUser, RuleAnthropicMetadata}
	case provider.Anthropic:
		return []Rule{RuleJSON, RuleDropAuth, RuleAnthropicMetadata}
	case provider.OpenAI, provider.OpenAIResponses, provider.OpenAICompatible, provider.AzureOpenAI, provider.AzureOpenAIResponses:
		return []Rule{RuleJSON, RuleDropAuth, RuleOpenAIUser}
	}
	return []Rule{RuleJSON, RuleDropAuth}
}

// matchHeaders are the request headers that change the answer: the only
// ones stored and matched (rule drop-auth).
var matchHeaders = [...]string{"anthropic-beta", "anthropic-version", "openai-beta"}

// matchHeaderKeys are matchHeaders as http.Header keys them
// (http.CanonicalHeaderKey), looked up without canonicalising each time.
var matchHeaderKeys = [len(matchHeaders)]string{"Anthropic-Beta", "Anthropic-Version", "Openai-Beta"}

// Redacted replaces a secret wherever it would be written.
const Redacted = redact.Redacted

// redactor is dryfire's one redactor.
type redactor = redact.Redactor

// forPath are the rules of those listed that apply to a request with this
// path when requests of any API are recorded.
func forPath(rules []Rule, path string) []Rule {
	anthropic, gemini := wire.IsAnthropicPath(path), wire.IsGeminiPath(path)
	out := make([]Rule, 0, len(rules))
	for _, r := range rules {
		if r == RuleOpenAIUser && (anthropic || gemini) || r == RuleAnthropicMetadata && !anthropic {
			continue
		}
		out = append(out, r)
	}
	return out
}

// canonBody is a request body in canonical form.
type canonBody struct {
	json  bool
	value any    // the parsed body (json only), rules applied, secrets redacted
	bytes []byte // canonical JSON as a cassette holds it, or the raw bytes (redacted)
}

// The indentation of a request body in a cassette file: a body written by
// dryfire compares equal, byte for byte, to a request in canonical form.
const (
	bodyPrefix = "        "
	bodyIndent = "  "
)

// bodyForm writes a body as value.Canonical does, indented as json.Indent
// does with bodyPrefix and bodyIndent.
var bodyForm = value.Form{Prefix: bodyPrefix, Indent: bodyIndent}

// canonicalBody parses a JSON body and applies the rules; anything else is
// kept as bytes.
func canonicalBody(body []byte, rules []Rule, red redactor) canonBody {
	if len(bytes.TrimSpace(body)) == 0 {
		return canonBody{bytes: red.Bytes(body)}
	}
	v, err := value.Parse(body)
	if err != nil {
		return canonBody{bytes: red.Bytes(body)}
	}
	obj, _ := v.(map[string]any) // the rules drop keys of an object (nil: not one)
	for _, r := range rules {
		switch r {
		case RuleOpenAIUser:
			delete(obj, "user")
			delete(obj, "safety_identifier")
			delete(obj, "prompt_cache_key")
		case RuleAnthropicMetadata:
			if md, ok := obj["metadata"].(map[string]any); ok {
				if delete(md, "user_id"); len(md) == 0 {
					delete(obj, "metadata")
				}
			}
		}
	}
	if len(red) > 0 {
		v = redactValue(v, red)
	}
	return canonBody{json: true, value: v, bytes: bodyForm.Append(make([]byte, 0, len(body)*2), v)}
}

func redactValue(v any, red redactor) any {
	switch x := v.(type) {
	case string:
		return red.String(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i], red)
		}
	case map[string]any:
		var renamed []string
		for k, e := range x {
			x[k] = redactValue(e, red)
			if red.String(k) != k {
				renamed = append(renamed, k)
			}
		}
		for _, k := range renamed {
			e := x[k]
			delete(x, k)
			x[red.String(k)] = e
		}
	}
	return v
}

// writeString writes s as a JSON string, as value.Canonical does.
func writeString(b *bytes.Buffer, s string) {
	b.WriteString(value.Canonical(s))
}
