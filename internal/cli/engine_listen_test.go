package cli_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

// Issue 30, hole 11: dryfire engine --listen 0.0.0.0:0 announced
// http://[::]:P, which its own Host check answers with 403. The URL it
// announces answers.
func TestEngineListenAllAnnouncesAURLThatAnswers(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- cli.Main([]string{"engine", "--listen", "0.0.0.0:0"}, inR, outW, io.Discard)
		outW.Close()
	}()
	defer func() {
		inW.Close()
		<-done
	}()
	line, err := bufio.NewReader(outR).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, outR)
	var ready struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(line, &ready); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	resp, err := http.Get(ready.URL + "/drills")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		t.Errorf("%s answered 403: %s", ready.URL, body)
	}
}
