// Command bare is the limit of the box for the serving benchmarks: a bare
// net/http handler that answers every POST with the same bytes dryfire
// would send, so that dryfire's figures can be read as a share of it.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	body := flag.String("body", `{"content":"{\"tier\":\"gold\"}","is_error":false}`, "the answer's bytes")
	ctype := flag.String("content-type", "application/json", "the answer's content type")
	flag.Parse()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The address on stdout, for the script.
	os.Stdout.WriteString("http://" + l.Addr().String() + "\n")
	data := []byte(*body)
	log.Fatal(http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the request like a real handler must.
		buf := make([]byte, 4096)
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		w.Header().Set("Content-Type", *ctype)
		w.Write(data)
	})))
}
