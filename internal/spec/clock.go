package spec

import (
	"fmt"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// ParseClock reads a clock's start time: RFC 3339, with or without a
// fraction (2026-01-02T03:04:05Z, 2026-01-02T03:04:05.5+01:00).
func ParseClock(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time such as 2026-01-02T03:04:05Z", s)
	}
	if t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%q is outside the years 1970 to 9999", s)
	}
	return t, nil
}

// clock reads agent.clock: a time, or {now, tz}.
func (x *decoder) clock(n *yaml.Node, val any) *Clock {
	c := &Clock{Pos: x.d.Pos(n)}
	var nowNode *yaml.Node
	switch v := val.(type) {
	case string:
		nowNode = n
	case map[string]any:
		_, nowNode = yamlpos.Lookup(n, "now")
		c.TZ = str(v["tz"])
		if _, tn := yamlpos.Lookup(n, "tz"); tn != nil && c.TZ != "" {
			if _, err := time.LoadLocation(c.TZ); err != nil || strings.EqualFold(c.TZ, "local") {
				x.errorf(tn, "unknown time zone %q: give an IANA name such as Europe/Berlin or UTC", c.TZ)
			}
		}
	default:
		return nil // reported by the schema
	}
	if nowNode == nil {
		return nil // reported by the schema
	}
	t, err := ParseClock(yamlpos.Deref(nowNode).Value)
	if err != nil {
		x.errorf(nowNode, "agent.clock: %v", err)
		return nil
	}
	c.Now = t
	return c
}
