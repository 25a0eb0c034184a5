package kind

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// --

type InvalidJsonValue struct {
	Value any
}

func (k *InvalidJsonValue) String() string {
	return fmt.Sprintf("invalid jsonType %T", k.Value)
}

// --

type Schema struct {
	Location string
}

func (k *Schema) String() string {
	return fmt.Sprintf("jsonschema validation failed with %s", quote(k.Location))
}

// --

// Failed is a failure its message says all of: 'not' failed, 'allOf'
// failed, 'anyOf' failed, false schema, no items match contains schema.
type Failed string

func (k Failed) String() string { return string(k) }

// --

type Group struct{}

func (*Group) String() string {
	return fmt.Sprintf("validation failed")
}

// --

type OneOf struct {
	// Subschemas gives indexes of Subschemas that have matched.
	// Value nil, means none of the subschemas matched.
	Subschemas []int
}

func (k *OneOf) String() string {
	if len(k.Subschemas) == 0 {
		return fmt.Sprintf("'oneOf' failed, none matched")
	}
	return fmt.Sprintf("'oneOf' failed, subschemas %d, %d matched", k.Subschemas[0], k.Subschemas[1])
}

type RefCycle struct {
	URL              string
	KeywordLocation1 string
	KeywordLocation2 string
}

func (k *RefCycle) String() string {
	return fmt.Sprintf("both %s and %s resolve to %q causing reference cycle", k.KeywordLocation1, k.KeywordLocation2, k.URL)
}

// --

type Type struct {
	Got  string
	Want []string
}

func (k *Type) String() string {
	return fmt.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))
}

// --

type Enum struct {
	Got  any
	Want []any
}

func (k *Enum) String() string {
	switch {
	case slices.ContainsFunc(k.Want, composite):
		return fmt.Sprintf("'enum' failed")
	case len(k.Want) == 1:
		return fmt.Sprintf("value must be %s", display(k.Want[0]))
	}
	want := make([]string, len(k.Want))
	for i, v := range k.Want {
		want[i] = display(v)
	}
	return fmt.Sprintf("value must be one of %s", strings.Join(want, ", "))
}

// composite says whether v is an array or an object.
func composite(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// --

type Const struct {
	Got  any
	Want any
}

func (k *Const) String() string {
	if composite(k.Want) {
		return fmt.Sprintf("'const' failed")
	}
	return fmt.Sprintf("value must be %s", display(k.Want))
}

// --

type Format struct {
	Got  any
	Want string
	Err  error
}

func (k *Format) String() string {
	return fmt.Sprintf("%s is not valid %s: %v", display(k.Got), k.Want, k.Err)
}

// --

type Reference struct {
	Keyword string
	URL     string
}

func (*Reference) String() string {
	return fmt.Sprintf("validation failed")
}

// --

type MinProperties struct {
	Got, Want int
}

func (k *MinProperties) String() string {
	return fmt.Sprintf("minProperties: got %d, want %d", k.Got, k.Want)
}

// --

type MaxProperties struct {
	Got, Want int
}

func (k *MaxProperties) String() string {
	return fmt.Sprintf("maxProperties: got %d, want %d", k.Got, k.Want)
}

// --

type MinItems struct {
	Got, Want int
}

func (k *MinItems) String() string {
	return fmt.Sprintf("minItems: got %d, want %d", k.Got, k.Want)
}

// --

type MaxItems struct {
	Got, Want int
}

func (k *MaxItems) String() string {
	return fmt.Sprintf("maxItems: got %d, want %d", k.Got, k.Want)
}

// --

type AdditionalItems struct {
	Count int
}

func (k *AdditionalItems) String() string {
	return fmt.Sprintf("last %d additionalItem(s) not allowed", k.Count)
}

// --

type Required struct {
	Missing []string
}

func (k *Required) String() string {
	if len(k.Missing) == 1 {
		return fmt.Sprintf("missing property %s", quote(k.Missing[0]))
	}
	return fmt.Sprintf("missing properties %s", joinQuoted(k.Missing, ", "))
}

// --

type Dependency struct {
	Prop    string   // dependency of prop that failed
	Missing []string // missing props
}

func (k *Dependency) String() string {
	return fmt.Sprintf("properties %s required, if %s exists", joinQuoted(k.Missing, ", "), quote(k.Prop))
}

// --

type DependentRequired struct {
	Prop    string   // dependency of prop that failed
	Missing []string // missing props
}

func (k *DependentRequired) String() string {
	return fmt.Sprintf("properties %s required, if %s exists", joinQuoted(k.Missing, ", "), quote(k.Prop))
}

// --

type AdditionalProperties struct {
	Properties []string
}

func (k *AdditionalProperties) String() string {
	return fmt.Sprintf("additional properties %s not allowed", joinQuoted(k.Properties, ", "))
}

// --

type PropertyNames struct {
	Property string
}

func (k *PropertyNames) String() string {
	return fmt.Sprintf("invalid propertyName %s", quote(k.Property))
}

// --

type UniqueItems struct {
	Duplicates [2]int
}

func (k *UniqueItems) String() string {
	return fmt.Sprintf("items at %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
}

// --

type MinContains struct {
	Got  []int
	Want int
}

func (k *MinContains) String() string {
	if len(k.Got) == 0 {
		return fmt.Sprintf("min %d items required to match contains schema, but none matched", k.Want)
	}
	got := fmt.Sprintf("%v", k.Got)
	return fmt.Sprintf("min %d items required to match contains schema, but matched %d items at %v", k.Want, len(k.Got), got[1:len(got)-1])
}

// --

type MaxContains struct {
	Got  []int
	Want int
}

func (k *MaxContains) String() string {
	got := fmt.Sprintf("%v", k.Got)
	return fmt.Sprintf("max %d items required to match contains schema, but matched %d items at %v", k.Want, len(k.Got), got[1:len(got)-1])
}

// --

type MinLength struct {
	Got, Want int
}

func (k *MinLength) String() string {
	return fmt.Sprintf("minLength: got %d, want %d", k.Got, k.Want)
}

// --

type MaxLength struct {
	Got, Want int
}

func (k *MaxLength) String() string {
	return fmt.Sprintf("maxLength: got %d, want %d", k.Got, k.Want)
}

// --

type Pattern struct {
	Got  string
	Want string
}

func (k *Pattern) String() string {
	return fmt.Sprintf("%s does not match pattern %s", quote(k.Got), quote(k.Want))
}

// --

type Minimum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *Minimum) String() string {
	return bound("minimum", k.Got, k.Want)
}

// --

type Maximum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *Maximum) String() string {
	return bound("maximum", k.Got, k.Want)
}

// --

type ExclusiveMinimum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *ExclusiveMinimum) String() string {
	return bound("exclusiveMinimum", k.Got, k.Want)
}

// --

type ExclusiveMaximum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *ExclusiveMaximum) String() string {
	return bound("exclusiveMaximum", k.Got, k.Want)
}

// --

type MultipleOf struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *MultipleOf) String() string {
	return bound("multipleOf", k.Got, k.Want)
}

// --

// bound is the message of a numeric keyword's failure, got and want as
// numbers are written in JSON (dryfire: not the English printer's 1,000
// or 1×10⁰⁶).
func bound(keyword string, got, want *big.Rat) string {
	return fmt.Sprintf("%s: got %s, want %s", keyword, number(got), number(want))
}

// number writes r as JavaScript does (plain decimals below 1e21), an
// integer below that exactly.
func number(r *big.Rat) string {
	if s := r.Num().String(); r.IsInt() && len(s) <= 21 {
		return s
	}
	f, _ := r.Float64()
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func quote(s string) string {
	s = fmt.Sprintf("%q", s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func joinQuoted(arr []string, sep string) string {
	q := make([]string, len(arr))
	for i, s := range arr {
		q[i] = quote(s)
	}
	return strings.Join(q, sep)
}

// to be used only for primitive.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	default:
		return fmt.Sprintf("%v", v)
	}
}
