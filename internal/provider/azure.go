package provider

import (
	"fmt"
	"strings"
)

// AzureV1 is the api_version of Azure OpenAI's v1 API (/openai/v1/…, no
// api-version in the query); the others are dates.
const AzureV1 = "v1"

// maxDeployment bounds a deployment's name, as Azure does.
const maxDeployment = 64

// DeploymentProblem says what is wrong with an Azure deployment's name, ""
// when nothing is: it goes into the URL's path, so it is letters, digits,
// '-', '_' and '.', starting with a letter or a digit, at most 64.
func DeploymentProblem(name string) string {
	if name == "" {
		return "it is empty"
	}
	if len(name) > maxDeployment {
		return fmt.Sprintf("it is %d bytes long, over Azure's %d", len(name), maxDeployment)
	}
	for i, r := range name {
		switch {
		case i == 0 && !isAlnum(r):
			return fmt.Sprintf("it starts with %q, not a letter or a digit", r)
		case !isAlnum(r) && r != '-' && r != '_' && r != '.':
			return fmt.Sprintf("it holds %q: a deployment's name is letters, digits, '-', '_' and '.'", r)
		}
	}
	return ""
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// APIVersionProblem says what is wrong with an api_version, "" when
// nothing is: v1, or a date YYYY-MM-DD with an optional -preview.
func APIVersionProblem(v string) string {
	if v == AzureV1 {
		return ""
	}
	date, rest, _ := strings.Cut(v, "-preview")
	if rest != "" || len(date) != 10 || date[4] != '-' || date[7] != '-' {
		return "it is neither v1 nor a date YYYY-MM-DD (with -preview for a preview version)"
	}
	for i, c := range []byte(date) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return "it is neither v1 nor a date YYYY-MM-DD (with -preview for a preview version)"
		}
	}
	if m, d := date[5:7], date[8:10]; m < "01" || m > "12" || d < "01" || d > "31" {
		return "its month or day is out of range"
	}
	return ""
}
