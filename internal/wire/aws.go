package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// AWS's two wire pieces Bedrock needs: Signature Version 4, and the event
// stream (application/vnd.amazon.eventstream) its streamed answers come
// in.

// awsKeys are the credentials a call is signed with: an access key, its
// secret, and a session token (temporary credentials) or none.
type awsKeys struct{ id, secret, token, region string }

// awsKeysOf reads them from the environment as the AWS SDKs do
// (AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1).
func awsKeysOf(getenv func(string) string) awsKeys {
	k := awsKeys{id: getenv("AWS_ACCESS_KEY_ID"), secret: getenv("AWS_SECRET_ACCESS_KEY"), token: getenv("AWS_SESSION_TOKEN"), region: getenv("AWS_REGION")}
	if k.region == "" {
		k.region = getenv("AWS_DEFAULT_REGION")
	}
	if k.region == "" {
		k.region = "us-east-1"
	}
	return k
}

// sign signs req, whose body is body, for service at now with Signature
// Version 4: X-Amz-Date, X-Amz-Security-Token with a session token, and
// Authorization, over the host, Content-Type and those.
func (k awsKeys) sign(req *http.Request, body []byte, service string, now time.Time) {
	t := now.UTC().Format("20060102T150405Z")
	req.Header.Set("X-Amz-Date", t)
	if k.token != "" {
		req.Header.Set("X-Amz-Security-Token", k.token)
	}
	names := []string{"host"}
	for name := range req.Header {
		if n := strings.ToLower(name); n == "content-type" || strings.HasPrefix(n, "x-amz-") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var canon strings.Builder
	for _, n := range names {
		v := req.Header.Get(n)
		if n == "host" {
			v = req.URL.Host
		}
		canon.WriteString(n + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	signed := strings.Join(names, ";")
	sum := sha256.Sum256(body)
	// Every service but S3 takes its path escaped once more.
	path := strings.ReplaceAll(url.PathEscape(req.URL.EscapedPath()), "%2F", "/")
	if path == "" {
		path = "/"
	}
	request := strings.Join([]string{req.Method, path, canonicalQuery(req.URL.Query()), canon.String(), signed, hex.EncodeToString(sum[:])}, "\n")
	scope := t[:8] + "/" + k.region + "/" + service + "/aws4_request"
	rsum := sha256.Sum256([]byte(request))
	toSign := "AWS4-HMAC-SHA256\n" + t + "\n" + scope + "\n" + hex.EncodeToString(rsum[:])
	key := []byte("AWS4" + k.secret)
	for _, part := range []string{t[:8], k.region, service, "aws4_request", toSign} {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(part))
		key = m.Sum(nil)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+k.id+"/"+scope+", SignedHeaders="+signed+", Signature="+hex.EncodeToString(key))
}

// canonicalQuery is a query as SigV4 signs it: keys and values escaped,
// in key order.
func canonicalQuery(q url.Values) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, strings.ReplaceAll(url.QueryEscape(k), "+", "%20")+"="+strings.ReplaceAll(url.QueryEscape(v), "+", "%20"))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "&")
}

// EventStreamType is the Content-Type of an AWS event stream.
const EventStreamType = "application/vnd.amazon.eventstream"

// awsEvent is one message of an event stream: its prelude (the total
// length, the headers' length, their CRC-32), its string headers
// (:event-type, :content-type, :message-type), its payload, and the
// CRC-32 of all before it.
func awsEvent(eventType string, payload []byte) []byte {
	var h bytes.Buffer
	for _, kv := range [][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}} {
		h.WriteByte(byte(len(kv[0])))
		h.WriteString(kv[0])
		h.WriteByte(7) // a string
		binary.Write(&h, binary.BigEndian, uint16(len(kv[1])))
		h.WriteString(kv[1])
	}
	total := 12 + h.Len() + len(payload) + 4
	b := binary.BigEndian.AppendUint32(nil, uint32(total))
	b = binary.BigEndian.AppendUint32(b, uint32(h.Len()))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(append(b, h.Bytes()...), payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// awsMessage is a message read off an event stream.
type awsMessage struct {
	headers map[string]string
	payload []byte
}

// readAWSEvents cuts an event stream into its messages, their checksums
// checked; an exception message is its error.
func readAWSEvents(data []byte) ([]awsMessage, error) {
	var out []awsMessage
	for len(data) > 0 {
		if len(data) < 16 {
			return nil, errStreamCut
		}
		total, hlen := int(binary.BigEndian.Uint32(data)), int(binary.BigEndian.Uint32(data[4:]))
		if total < 16 || hlen > total-16 || total > len(data) {
			return nil, errStreamCut
		}
		if crc32.ChecksumIEEE(data[:8]) != binary.BigEndian.Uint32(data[8:]) || crc32.ChecksumIEEE(data[:total-4]) != binary.BigEndian.Uint32(data[total-4:]) {
			return nil, errors.New("an event of the stream fails its checksum")
		}
		m := awsMessage{headers: map[string]string{}, payload: data[12+hlen : total-4]}
		for h := data[12 : 12+hlen]; len(h) > 0; {
			n := int(h[0])
			if len(h) < n+4 || h[n+1] != 7 {
				return nil, errors.New("an event of the stream has a header dryfire does not read")
			}
			name, vlen := string(h[1:n+1]), int(binary.BigEndian.Uint16(h[n+2:]))
			if len(h) < n+4+vlen {
				return nil, errStreamCut
			}
			m.headers[name], h = string(h[n+4:n+4+vlen]), h[n+4+vlen:]
		}
		if m.headers[":message-type"] == "exception" || m.headers[":message-type"] == "error" {
			return nil, fmt.Errorf("the answer's stream carries an error: %s: %s", m.headers[":exception-type"]+m.headers[":error-code"], excerpt(m.payload))
		}
		out = append(out, m)
		data = data[total:]
	}
	return out, nil
}
