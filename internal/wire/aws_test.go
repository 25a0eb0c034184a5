package wire

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The signature botocore 1.44.18 gives this request (SigV4Auth, service
// bedrock, at 2026-12-07T12:00:00Z): an independent signer's, the one
// boto3's bedrock-runtime client sends.
func TestSigV4AsBotocore(t *testing.T) {
	body := `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`
	req, _ := http.NewRequest(http.MethodPost, "https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	k := awsKeys{id: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token: "session-token-1", region: "eu-west-1"}
	k.sign(req, []byte(body), "bedrock", time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261207/eu-west-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=91158487b281cd5388334a4d3ffbd75e31a95cd224546639f475e8090b215b92"
	if got := req.Header.Get("Authorization"); got != want {
		t.Errorf("Authorization:\n%s\nwant\n%s", got, want)
	}
}

// An event stream's messages read back as written; one cut short, or
// whose checksum fails, is an error.
func TestAWSEventStream(t *testing.T) {
	data := append(awsEvent("messageStart", []byte(`{"role":"assistant"}`)), awsEvent("messageStop", []byte(`{"stopReason":"end_turn"}`))...)
	ms, err := readAWSEvents(data)
	if err != nil || len(ms) != 2 || ms[1].headers[":event-type"] != "messageStop" || string(ms[1].payload) != `{"stopReason":"end_turn"}` {
		t.Fatalf("%v %+v", err, ms)
	}
	if _, err := readAWSEvents(data[:len(data)-3]); err == nil {
		t.Error("a cut stream read")
	}
	bad := append([]byte(nil), data...)
	bad[20] ^= 1
	if _, err := readAWSEvents(bad); err == nil {
		t.Error("a changed stream read")
	}
}
