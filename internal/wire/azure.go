package wire

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/provider"
)

// Azure OpenAI: the OpenAI APIs at a resource's endpoint
// (https://NAME.openai.azure.com, AZURE_OPENAI_ENDPOINT or agent.base_url,
// as the AzureOpenAI clients take it), the key in api-key.
//
//   - azure-openai is Chat Completions at the deployment's path,
//     {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=V;
//   - azure-openai-responses is the Responses API,
//     {endpoint}/openai/responses?api-version=V;
//   - api_version v1 (provider.AzureV1) is the v1 API instead: {endpoint}/openai/v1/chat/completions
//     and /openai/v1/responses, no api-version.
//
// The deployment is agent.model, also sent as the body's model, as the
// AzureOpenAI clients send it. The bodies and answers are OpenAI's, read
// and written by openai.go and responses.go: a streamed chat answer's first
// chunk on Azure has no choices (its prompt_filter_results), which the fold
// skips.

// Azure OpenAI's api-version when agent.api_version sets none: the latest
// generally available one for chat completions; the Responses API is in
// preview versions only.
const (
	DefaultAzureAPIVersion          = "2024-10-21"
	DefaultAzureResponsesAPIVersion = "2025-04-01-preview"
)

// AzureEndpointEnv and AzureKeyEnv are the variables of an Azure OpenAI
// resource, as the openai packages' AzureOpenAI clients read them.
const (
	AzureEndpointEnv = "AZURE_OPENAI_ENDPOINT"
	AzureKeyEnv      = "AZURE_OPENAI_API_KEY"
)

// unsetEndpoint is the endpoint of calls when none is set: they can only be
// replayed (Credentials.LiveUnavailable says why they cannot go live), and
// a .invalid name never resolves (RFC 6761).
const unsetEndpoint = "https://azure-openai.invalid"

// IsAzureHost says whether a host name is Azure's (a resource's endpoint,
// or API Management in front of one): a key is needed there.
func IsAzureHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return strings.HasSuffix(host, ".azure.com") || strings.HasSuffix(host, ".azure-api.net")
}

// azureURL is where a call of an Azure provider for deployment goes: api
// is "chat/completions" or "responses".
func azureURL(base, version, api, deployment string) (string, error) {
	if p := provider.DeploymentProblem(deployment); p != "" {
		return "", fmt.Errorf("the Azure OpenAI deployment %q (agent.model) cannot be used: %s", deployment, p)
	}
	if base == "" {
		base = unsetEndpoint
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("the Azure OpenAI endpoint %q is not an absolute URL (https://NAME.openai.azure.com)", base)
	}
	if version == "" {
		version = DefaultAzureAPIVersion
	}
	elems := []string{"openai"}
	q := u.Query()
	switch {
	case version == provider.AzureV1:
		elems = append(elems, "v1", api)
	case api == "chat/completions":
		elems = append(elems, "deployments", deployment, api)
		q.Set("api-version", version)
	default:
		elems = append(elems, api)
		q.Set("api-version", version)
	}
	u = u.JoinPath(elems...)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// azureHeader authenticates with api-key, when there is a key (a replay
// needs none).
func azureHeader(key string) http.Header {
	h := http.Header{}
	if key != "" {
		h.Set("Api-Key", key)
	}
	return h
}
