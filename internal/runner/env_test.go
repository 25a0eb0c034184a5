package runner

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// offlineTable is OfflineEnv as docs/agents.md shows it.
func offlineTable() string {
	var b strings.Builder
	for _, s := range OfflineEnv {
		vars := make([]string, len(s.Vars))
		for i, kv := range s.Vars {
			vars[i] = "`" + kv[0] + "=" + kv[1] + "`"
		}
		b.WriteString("| " + s.What + " | " + strings.Join(vars, ", ") + " |\n")
	}
	return b.String()
}

// The table of offline settings in docs/agents.md is OfflineEnv, row for
// row. DRYFIRE_UPDATE_DOCS=1 rewrites it.
func TestOfflineEnvDocumented(t *testing.T) {
	const page = "../../docs/agents.md"
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	const head = "| what it keeps from calling home | variables |\n|---|---|\n"
	begin := strings.Index(text, head)
	end := strings.Index(text, "<!-- offline-env: end -->")
	if begin < 0 || end < begin {
		t.Fatalf("%s has no table of offline settings (%q ... <!-- offline-env: end -->)", page, head)
	}
	got := text[begin+len(head) : end]
	want := offlineTable()
	if os.Getenv("DRYFIRE_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(page, []byte(text[:begin+len(head)]+want+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: the offline settings differ from OfflineEnv (-code +docs; DRYFIRE_UPDATE_DOCS=1 rewrites them):\n%s", page, diff)
	}
}
