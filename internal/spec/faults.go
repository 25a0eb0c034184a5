package spec

import (
	"encoding/json"
	"strconv"
	"time"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// ModelFault is what a case's model endpoint answers one model request
// with instead of (or before) the model's answer.
type ModelFault struct {
	Request    int           // the case's Nth model request, 1-based, retries counted
	Status     int           // an error status to answer; 0: none
	RetryAfter time.Duration // with Status: Retry-After; negative: not sent
	Drop       bool          // close the connection without an answer
	CutAfter   int           // send this many stream events, then close; negative: no cut
	Delay      time.Duration // wait before answering
	Pos        yamlpos.Pos
}

// modelFaults reads a case's model_faults: one fault at most per
// request, and each a status, a drop, a cut or a delay.
func (x *decoder) modelFaults(n *yaml.Node, val any) []ModelFault {
	var out []ModelFault
	at := map[int]bool{}
	for _, it := range yamlpos.Items(n, val) {
		m, ok := it.Val.(map[string]any)
		if !ok || yamlpos.Deref(it.N) == nil {
			continue // reported by the schema
		}
		f := ModelFault{RetryAfter: -1, CutAfter: -1, Pos: x.d.Pos(it.N)}
		kinds := 0
		for _, p := range yamlpos.Pairs(it.N, m) {
			switch p.Key() {
			case "request":
				f.Request, _ = x.integer(p.V, p.Val)
			case "status":
				f.Status, _ = x.integer(p.V, p.Val)
				kinds++
			case "retry_after":
				if num, ok := p.Val.(json.Number); ok {
					if s, err := strconv.ParseFloat(string(num), 64); err == nil && s >= 0 && s <= 3600 {
						f.RetryAfter = time.Duration(s * float64(time.Second))
					}
				}
			case "drop":
				f.Drop = p.Val == true
				kinds++
			case "cut_after":
				f.CutAfter, _ = x.integer(p.V, p.Val)
				kinds++
			case "delay_ms":
				ms, _ := x.integer(p.V, p.Val)
				f.Delay = time.Duration(ms) * time.Millisecond
			}
		}
		switch {
		case kinds > 1:
			x.errorf(it.N, "a model fault is one of status, drop and cut_after (delay_ms goes with any of them); give each its own request")
			continue
		case kinds == 0 && f.Delay == 0:
			x.errorf(it.N, "a model fault needs status, drop, cut_after or delay_ms")
			continue
		case f.RetryAfter >= 0 && f.Status == 0:
			_, rn := yamlpos.Lookup(it.N, "retry_after")
			x.errorf(rn, "retry_after goes with status (the error answer that carries Retry-After)")
			continue
		case f.Request == 0:
			continue // reported by the schema
		case at[f.Request]:
			_, rn := yamlpos.Lookup(it.N, "request")
			x.errorf(rn, "model request %d has a fault already; a request gets one (delay_ms goes with it)", f.Request)
			continue
		}
		at[f.Request] = true
		out = append(out, f)
	}
	return out
}
