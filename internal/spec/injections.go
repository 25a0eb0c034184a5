package spec

import (
	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Injections are a suite's prompt-injection drills (dryfire inject):
// where payloads are planted beside tool results and descriptions, and
// the suite's own payloads.
type Injections struct {
	// WorldRecord is the state path of a world record the payload is
	// planted in; WorkspaceFile the workspace file it is appended to.
	WorldRecord, WorkspaceFile string
	// NoCatalogue leaves the built-in catalogue out.
	NoCatalogue bool
	Payloads    []*Payload
	Pos         yamlpos.Pos
}

// Payload is one planted instruction: its category, its text, and the
// attacker's goal (nil: the category's marker leaves the agent).
type Payload struct {
	ID, Category, Text string
	Goal               *Check
	Pos                yamlpos.Pos
}

// injections decodes the suite's injections: (the schema has checked
// its shape).
func (x *decoder) injections(k, n *yaml.Node, val any) *Injections {
	top, _ := val.(map[string]any)
	in := &Injections{Pos: x.d.Pos(k), WorldRecord: str(top["world_record"]), WorkspaceFile: str(top["workspace_file"])}
	seen := map[string]bool{}
	for _, p := range yamlpos.Pairs(n, val) {
		switch p.Key() {
		case "catalogue":
			b, _ := p.Val.(bool)
			in.NoCatalogue = !b
		case "payloads":
			for _, it := range yamlpos.Items(p.V, p.Val) {
				m, ok := it.Val.(map[string]any)
				if !ok {
					continue
				}
				pl := &Payload{ID: str(m["id"]), Category: str(m["category"]), Text: str(m["text"]), Pos: x.d.Pos(it.N)}
				if seen[pl.ID] {
					x.errorf(it.N, "payload id %q is given twice", pl.ID)
				}
				seen[pl.ID] = true
				if _, gn := yamlpos.Lookup(it.N, "goal"); gn != nil {
					pl.Goal = x.standalone(yamlpos.Item{N: gn, Val: m["goal"]}, "a payload's goal is not a %s check")
				}
				in.Payloads = append(in.Payloads, pl)
			}
		}
	}
	return in
}

// checkInjections says what the suite's injections need of the rest of
// it: a world for world_record.
func (x *decoder) checkInjections(s *Suite, root *yaml.Node) {
	if s.Injections == nil || s.Injections.WorldRecord == "" || s.World != "" {
		return
	}
	_, n := yamlpos.Lookup(root, "injections")
	k, _ := yamlpos.Lookup(n, "world_record")
	x.errorf(k, "world_record plants the payload in a world's record: the suite needs world:")
}
