package program

import (
	"context"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/netjail"
)

// In a jail the program runs under bubblewrap, which exits 128+N for a
// program killed by signal N: the result still says the signal, as
// without a jail; a plain status stays a status.
func TestJailedProgramKilledBySignal(t *testing.T) {
	if err := netjail.Available(); err != nil {
		t.Skip(err)
	}
	for script, want := range map[string]string{
		`kill -TERM $$`: "the agent was killed by signal terminated",
		`exit 3`:        "the agent exited with status 3",
	} {
		j, err := netjail.New(0, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := Run(context.Background(), Spec{Argv: []string{"sh", "-c", script}, Timeout: 10 * time.Second, Jail: j})
		if r.Err == nil || r.Err.Error() != want {
			t.Errorf("%s: %v, want %s", script, r.Err, want)
		}
	}
}
