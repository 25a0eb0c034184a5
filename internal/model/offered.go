package model

// MaxOffered bounds the tools a case keeps of those its model requests
// offer (Outcome.Offered); the ones past it are not compared.
const MaxOffered = 1024

// offered are the tools a case's model requests offered, each name once
// as first offered, in that order: what internal/runner compares with
// the suite's declarations.
type offered struct {
	defs []ToolDef
	seen map[string]bool
	over bool
}

func (o *offered) add(tools []ToolDef) {
	for _, t := range tools {
		switch {
		case o.seen[t.Name]:
		case len(o.defs) == MaxOffered:
			o.over = true
		default:
			if o.seen == nil {
				o.seen = map[string]bool{}
			}
			o.seen[t.Name] = true
			o.defs = append(o.defs, t)
		}
	}
}
