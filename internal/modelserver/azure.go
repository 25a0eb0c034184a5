package modelserver

import "strings"

// Azure OpenAI serves the OpenAI APIs at its own paths, the version in
// ?api-version= and the key in api-key: a deployment's
// /openai/deployments/{deployment}/chat/completions (and /responses),
// the v1 API's /openai/v1/chat/completions and /openai/v1/responses, and
// /openai/responses. The AzureOpenAI clients (openai's Python and JS
// packages) take AZURE_OPENAI_ENDPOINT as the host root. Requests are
// answered as the OpenAI API of the path answers them; recorded calls go
// to AZURE_OPENAI_ENDPOINT with AZURE_OPENAI_API_KEY.

// azurePath is the API of an Azure OpenAI path.
func azurePath(path string) (API, bool) {
	rest := strings.TrimPrefix(path, "/openai/")
	if d, ok := strings.CutPrefix(rest, "deployments/"); ok {
		i := strings.IndexByte(d, '/')
		if i <= 0 {
			return "", false
		}
		rest = d[i+1:]
	} else {
		rest = strings.TrimPrefix(rest, "v1/")
	}
	switch rest {
	case "chat/completions":
		return OpenAIChat, true
	case "responses":
		return OpenAIResponses, true
	}
	return "", false
}
