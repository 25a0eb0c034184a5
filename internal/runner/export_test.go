package runner

import "github.com/dryfire-dev/dryfire/internal/tool"

// Fault is the point's failure as a recorder gives it (RecorderOptions,
// toolserver.ScopeOptions): its call fails, the others are answered.
func (p Point) Fault() tool.Fault { return &pointRun{p: p} }
