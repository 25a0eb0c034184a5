package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/npm"
)

// nodeDir is the Node project of the official definitions.
var nodeDir = filepath.Join("..", "..", "..", "e2e", "conformance")

// officialType is the SDK type each artifact is checked as, and the rule
// a failure names. Responses objects are checked without output_text,
// which the SDK computes on the client and the API does not send.
var officialType = map[string]map[string]string{
	"anthropic": {
		"request": "Anthropic.MessageCreateParamsNonStreaming",
		"answer":  "Anthropic.Message",
		"chunk":   "Anthropic.RawMessageStreamEvent",
	},
	"openai": {
		"request": "OpenAI.ChatCompletionCreateParamsNonStreaming",
		"answer":  "OpenAI.ChatCompletion",
		"chunk":   "OpenAI.ChatCompletionChunk",
	},
	"openai-responses": {
		"request": "OpenAI.Responses.ResponseCreateParamsNonStreaming",
		"answer":  "WireResponse",
		"chunk":   "WireResponseStreamEvent",
	},
	"azure-openai": {
		"request": "OpenAI.ChatCompletionCreateParamsNonStreaming",
		"answer":  "WireAzureChatCompletion",
		"chunk":   "WireAzureChatCompletionChunk",
	},
	wsProvider: {
		"chunk": "WireResponsesServerEvent",
	},
	"gemini": {
		"request": "WireGeminiRequest",
		"answer":  "WireGeminiResponse",
		"chunk":   "WireGeminiResponse",
	},
}

// geminiRule names what the Wire Gemini types are made of.
var geminiRule = map[string]string{
	"WireGeminiRequest":  "GenerateContentRequest as the REST body: contents Content[], systemInstruction Content, tools Tool[], toolConfig ToolConfig, safetySettings SafetySetting[], generationConfig GenerationConfig",
	"WireGeminiResponse": "GenerateContentResponse (without the SDK's own getters)",
}

func typeOf(a artifact) string {
	p := a.Provider
	switch p {
	case "openai-compatible":
		p = "openai"
	case "azure-openai-responses":
		p = "openai-responses"
	}
	return officialType[p][a.Kind]
}

const tsPrelude = `import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type * as Gemini from '@google/genai';

// A Response as the API sends it: output_text is computed by the SDK.
type WireResponse = Omit<OpenAI.Responses.Response, 'output_text'>;
type WireEvent<E> = E extends { response: OpenAI.Responses.Response } ? Omit<E, 'response'> & { response: WireResponse } : E;
type WireResponseStreamEvent = WireEvent<OpenAI.Responses.ResponseStreamEvent>;
type WireResponsesServerEvent = WireEvent<OpenAI.Responses.ResponsesServerEvent>;

// @google/genai types its enumerations (FinishReason, MediaModality, …) as
// TypeScript string enums, which a JSON string cannot be: Unenum makes
// each the union of its values, deeply.
type Unenum<T> = T extends string ? (string extends T ? T : ` + "`${T}`" + `)
  : T extends (infer U)[] ? Unenum<U>[]
  : T extends object ? { [K in keyof T]: Unenum<T[K]> } : T;
// The Gemini REST body: @google/genai's own parameters type is the SDK's
// (model, contents, config); the body is made of these official types.
type WireGeminiRequest = Unenum<{
  contents: Gemini.Content[];
  systemInstruction?: Gemini.Content;
  tools?: Gemini.Tool[];
  toolConfig?: Gemini.ToolConfig;
  safetySettings?: Gemini.SafetySetting[];
  generationConfig?: Gemini.GenerationConfig;
  cachedContent?: string;
}>;
// Azure OpenAI's chat answers are openai's (its AzureOpenAI client returns
// them as OpenAI.ChatCompletion) with its content filter's verdicts, which
// no official TypeScript package declares: typed here as Azure's REST
// reference (2024-10-21) gives them, so that every other key is still
// checked as openai's.
type AzureFilterSeverity = { filtered: boolean; severity: 'safe' | 'low' | 'medium' | 'high' };
type AzureFilterDetected = { filtered: boolean; detected: boolean };
type AzureFilterResults = {
  hate?: AzureFilterSeverity; self_harm?: AzureFilterSeverity; sexual?: AzureFilterSeverity; violence?: AzureFilterSeverity;
  profanity?: AzureFilterDetected; jailbreak?: AzureFilterDetected; indirect_attack?: AzureFilterDetected;
  protected_material_text?: AzureFilterDetected;
  protected_material_code?: AzureFilterDetected & { citation?: { URL?: string; license?: string } };
  custom_blocklists?: { filtered: boolean; details: { filtered: boolean; id: string }[] };
  error?: { code: string; message: string };
};
type AzurePromptFilter = { prompt_filter_results?: { prompt_index: number; content_filter_results: AzureFilterResults }[] };
type WireAzureChatCompletion = Omit<OpenAI.ChatCompletion, 'choices'> & AzurePromptFilter & {
  choices: (OpenAI.ChatCompletion.Choice & { content_filter_results?: AzureFilterResults })[];
};
type WireAzureChatCompletionChunk = Omit<OpenAI.ChatCompletionChunk, 'choices'> & AzurePromptFilter & {
  choices: (OpenAI.ChatCompletionChunk.Choice & { content_filter_results?: AzureFilterResults })[];
};
// A GenerateContentResponse as the API sends it: the getters are the SDK's.
type WireGeminiResponse = Unenum<Omit<Gemini.GenerateContentResponse, 'text' | 'data' | 'functionCalls' | 'executableCode' | 'codeExecutionResult' | 'initialPromptTokenCount'>>;
`

// tsFile is the TypeScript of artifacts, and which artifact and JSON path
// each of its lines shows.
type tsFile struct {
	text  strings.Builder
	lines []tsLine // lines[i] is line i+1
}

type tsLine struct {
	art  int // index into the artifacts; -1: the prelude
	path string
}

func (f *tsFile) write(s string, art int, path string) {
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			f.text.WriteByte('\n')
		}
		f.text.WriteString(part)
		if i > 0 || len(f.lines) == 0 {
			f.lines = append(f.lines, tsLine{art, path})
		}
	}
}

// newline starts a line that shows path of artifact art.
func (f *tsFile) newline(art int, path string, indent int) {
	f.text.WriteByte('\n')
	f.lines = append(f.lines, tsLine{art, path})
	f.text.WriteString(strings.Repeat("  ", indent))
}

// literal writes the JSON value read from dec as a TypeScript literal,
// keys in their order, one property or element a line.
func (f *tsFile) literal(dec *json.Decoder, art int, path string, indent int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok := tok.(type) {
	case json.Delim:
		closer, open := "}", "{"
		if tok == '[' {
			closer, open = "]", "["
		}
		f.text.WriteString(open)
		n := 0
		for dec.More() {
			if n > 0 {
				f.text.WriteByte(',')
			}
			var sub string
			if tok == '{' {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key := kt.(string)
				sub = jsonPath(path, key)
				f.newline(art, sub, indent+1)
				k, _ := json.Marshal(key)
				f.text.Write(k)
				f.text.WriteString(": ")
			} else {
				sub = fmt.Sprintf("%s[%d]", path, n)
				f.newline(art, sub, indent+1)
			}
			if err := f.literal(dec, art, sub, indent+1); err != nil {
				return err
			}
			n++
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		if n > 0 {
			f.newline(art, path, indent)
		}
		f.text.WriteString(closer)
	case string:
		s, _ := json.Marshal(tok)
		f.text.Write(s)
	case json.Number:
		f.text.WriteString(tok.String())
	case bool:
		f.text.WriteString(strconv.FormatBool(tok))
	case nil:
		f.text.WriteString("null")
	}
	return nil
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func jsonPath(path, key string) string {
	if identifier.MatchString(key) {
		return path + "." + key
	}
	k, _ := json.Marshal(key)
	return path + "[" + string(k) + "]"
}

// typeFailure is one disagreement tsc found.
type typeFailure struct {
	Artifact int
	Path     string
	Message  string
}

// checkTypes type-checks the artifacts against the official types with
// tsc --strict and returns what disagrees.
func checkTypes(t *testing.T, arts []artifact) []typeFailure {
	t.Helper()
	var f tsFile
	f.write(tsPrelude, -1, "")
	for i, a := range arts {
		f.newline(-1, "", 0)
		f.write(fmt.Sprintf("// %s %s: %s", a.Provider, a.Kind, a.Label), i, "$")
		f.newline(i, "$", 0)
		f.text.WriteString(fmt.Sprintf("export const a%d: %s = ", i, typeOf(a)))
		dec := json.NewDecoder(bytes.NewReader(a.Body))
		dec.UseNumber()
		if err := f.literal(dec, i, "$", 0); err != nil {
			t.Fatalf("%s %s %s: not JSON: %v\n%s", a.Provider, a.Kind, a.Label, err, a.Body)
		}
		f.text.WriteString(";")
	}
	f.newline(-1, "", 0)

	dir, err := os.MkdirTemp(nodeDir, ".check-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "wire.ts"), []byte(f.text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tsconfig := `{"compilerOptions":{"strict":true,"noEmit":true,"target":"es2022","module":"nodenext","moduleResolution":"nodenext","skipLibCheck":true,"types":[]},"files":["wire.ts"]}`
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(tsconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join("..", "node_modules", ".bin", "tsc")
	cmd := exec.Command(tsc, "-p", ".", "--pretty", "false")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	return parseTSC(t, out, f.lines)
}

var tscLine = regexp.MustCompile(`^wire\.ts\((\d+),(\d+)\): error (TS\d+): (.*)$`)

// parseTSC reads tsc's errors (an error line, then indented lines that
// explain it) and places each on its artifact and JSON path.
func parseTSC(t *testing.T, out []byte, lines []tsLine) []typeFailure {
	t.Helper()
	var fails []typeFailure
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := tscLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n < 1 || n > len(lines) || lines[n-1].art < 0 {
				t.Fatalf("tsc reports an error outside the checked values (line %d): %s\n%s", n, line, out)
			}
			fails = append(fails, typeFailure{lines[n-1].art, lines[n-1].path, m[3] + ": " + m[4]})
			continue
		}
		if len(fails) > 0 && strings.HasPrefix(line, " ") {
			fails[len(fails)-1].Message += "\n" + line
			continue
		}
		if strings.TrimSpace(line) != "" {
			t.Fatalf("tsc: unexpected output %q\n%s", line, out)
		}
	}
	return fails
}

// nodeReady installs the pinned definitions.
func nodeReady(t *testing.T) { npm.Ready(t, nodeDir, "the conformance checks") }
