package jschema

// QuickVerdict is what schema s's quick tree says of v, "" when it has
// none; LibraryValid is the validator's verdict alone.
func QuickVerdict(s *Schema, v any) string {
	if s.late != nil {
		s.late.quick()
	}
	if s.q == nil {
		return ""
	}
	return s.q.check(v, 0).String()
}

func LibraryValid(s *Schema, v any) bool { return len(s.validate(v)) == 0 }

func (v verdict) String() string {
	switch v {
	case yes:
		return "yes"
	case no:
		return "no"
	}
	return "unsure"
}

// ValidatorCompiled tells whether s's validator is compiled (an embedded
// schema's is compiled on first need).
func ValidatorCompiled(s *Schema) bool { return s.s != nil }
