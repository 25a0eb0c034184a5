package runner

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestVertexEnv: a program gets a service account of its own, whose token
// comes from its case's endpoint, and the run's project and location (else
// dryfire's); clean removes the account.
func TestVertexEnv(t *testing.T) {
	vars, clean, err := vertexEnv("http://127.0.0.1:1/cases/c1", func(k string) string {
		return map[string]string{"GOOGLE_CLOUD_PROJECT": "mine", "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, v := range vars {
		k, val, _ := strings.Cut(v, "=")
		env[k] = val
	}
	data, err := os.ReadFile(env["GOOGLE_APPLICATION_CREDENTIALS"])
	if err != nil {
		t.Fatal(err)
	}
	var account map[string]string
	if err := json.Unmarshal(data, &account); err != nil || account["token_uri"] != "http://127.0.0.1:1/cases/c1/token" || account["type"] != "service_account" {
		t.Errorf("%s %v", data, err)
	}
	if env["GOOGLE_CLOUD_PROJECT"] != "mine" || env["ANTHROPIC_VERTEX_PROJECT_ID"] != "mine" || env["CLOUD_ML_REGION"] != "us-central1" {
		t.Errorf("%v", env)
	}
	clean()
	if _, err := os.Stat(env["GOOGLE_APPLICATION_CREDENTIALS"]); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
}
