package world

import (
	"fmt"
	"strings"
)

// Plant sets the value at a state path (package.collection.key...), the
// last step created when missing, before the drill's calls: how an
// injection drill puts a payload in a world record. The path must lead
// through mappings that exist; the state version does not move.
func (in *Instance) Plant(path string, v any) error {
	steps, err := SplitPath(path)
	if err != nil {
		return err
	}
	if len(steps) < 3 {
		return fmt.Errorf("state path %q: name a field of a record (package.collection.key...)", path)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	coll, ok := in.state[steps[0]][steps[1]]
	if !ok {
		return fmt.Errorf("state path %q: the world has no collection %s.%s", path, steps[0], steps[1])
	}
	coll = deepCopy(coll)
	cur := coll
	for i, s := range steps[2:] {
		m, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("state path %q: %s is not a mapping", path, strings.Join(steps[:i+2], "."))
		}
		if i == len(steps)-3 {
			m[s] = v
			break
		}
		if cur, ok = m[s]; !ok {
			return fmt.Errorf("state path %q: %s has no %q", path, strings.Join(steps[:i+2], "."), s)
		}
	}
	in.state[steps[0]][steps[1]] = coll
	return nil
}
