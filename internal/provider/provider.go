// Package provider names the model providers a suite's agent may name:
// the suite format validates them, and the model clients, the cassettes
// (what a request is compared on) and the model endpoint (which API a
// route is) act on them. It sits below all of them so that none imports
// another for a name.
package provider

// The providers of agent.provider.
const (
	// Script answers from the case's own script: no model, no network.
	Script = "script"
	// Anthropic is the Anthropic Messages API.
	Anthropic = "anthropic"
	// OpenAI is the OpenAI Chat Completions API.
	OpenAI = "openai"
	// OpenAIResponses is the OpenAI Responses API.
	OpenAIResponses = "openai-responses"
	// OpenAICompatible is a Chat Completions API at agent.base_url.
	OpenAICompatible = "openai-compatible"
	// Gemini is the Gemini API (generateContent).
	Gemini = "gemini"
	// AzureOpenAI is Chat Completions at an Azure OpenAI deployment.
	AzureOpenAI = "azure-openai"
	// AzureOpenAIResponses is the Responses API of an Azure OpenAI resource.
	AzureOpenAIResponses = "azure-openai-responses"
	// Ollama is Ollama's own chat API (/api/chat).
	Ollama = "ollama"
	// Bedrock is Amazon Bedrock's Converse API.
	Bedrock = "bedrock"
	// VertexGemini and VertexAnthropic are the Gemini API and Anthropic's
	// Messages at Vertex AI's paths.
	VertexGemini    = "vertex-gemini"
	VertexAnthropic = "vertex-anthropic"
)

// Names are the providers, in the order a message lists them.
var Names = []string{Anthropic, OpenAI, OpenAIResponses, OpenAICompatible, Gemini, AzureOpenAI, AzureOpenAIResponses, Ollama, Bedrock, VertexGemini, VertexAnthropic, Script}

// IsAzure says whether a provider is one of Azure OpenAI's.
func IsAzure(name string) bool { return name == AzureOpenAI || name == AzureOpenAIResponses }
