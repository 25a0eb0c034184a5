package runner

import (
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/modelserver"
)

// vertexEnv are the variables that lead a program's Google clients to
// Vertex AI on the case's endpoint: the project and location (the run's,
// else dryfire's: a cassette does not keep them) and Application Default
// Credentials that reach no Google server: a service account of its own
// (written for the case, removed by clean), whose token_uri is the case's
// endpoint, which answers a dummy token; so the run's own credentials
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's) never reach the program.
// google-genai reaches Vertex AI on the endpoint only when the program
// passes project and location to its Client: with GOOGLE_VERTEX_BASE_URL
// and no project passed it takes the endpoint for an API gateway.
func vertexEnv(prefix string, getenv func(string) string) (vars []string, clean func(), err error) {
	clean = func() {}
	project, location := getenv("GOOGLE_CLOUD_PROJECT"), getenv("GOOGLE_CLOUD_LOCATION")
	project = cmp.Or(project, "dryfire")
	location = cmp.Or(location, "us-central1")
	key, err := serviceKey()
	if err != nil {
		return nil, clean, err
	}
	account, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": project, "private_key_id": "dryfire",
		"private_key": key, "client_email": "dryfire@" + project + ".iam.gserviceaccount.com", "client_id": "1",
		"token_uri": prefix + modelserver.TokenPath})
	dir, err := os.MkdirTemp("", "dryfire-google-")
	if err != nil {
		return nil, clean, err
	}
	file := filepath.Join(dir, "credentials.json")
	if err := os.WriteFile(file, account, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, clean, err
	}
	vars = []string{"GOOGLE_APPLICATION_CREDENTIALS=" + file, "GOOGLE_CLOUD_PROJECT=" + project, "GOOGLE_CLOUD_LOCATION=" + location,
		"ANTHROPIC_VERTEX_PROJECT_ID=" + project, "CLOUD_ML_REGION=" + location}
	return vars, func() { os.RemoveAll(dir) }, nil
}

// serviceKey is the RSA key of the service account, made once a process
// (google-auth signs its token request with it; nothing checks it).
var serviceKey = sync.OnceValues(func() (string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), err
})
