package kind

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"golang.org/x/text/message"
)

// --

type InvalidJsonValue struct {
	Value any
}

func (k *InvalidJsonValue) LocalizedString(p *message.Printer) string {
	return p.Sprintf("invalid jsonType %T", k.Value)
}

// --

type Schema struct {
	Location string
}

func (k *Schema) LocalizedString(p *message.Printer) string {
	return p.Sprintf("jsonschema validation failed with %s", quote(k.Location))
}

// --

type Group struct{}

func (*Group) LocalizedString(p *message.Printer) string {
	return p.Sprintf("validation failed")
}

// --

type Not struct{}

func (*Not) LocalizedString(p *message.Printer) string {
	return p.Sprintf("'not' failed")
}

// --

type AllOf struct{}

func (*AllOf) LocalizedString(p *message.Printer) string {
	return p.Sprintf("'allOf' failed")
}

// --

type AnyOf struct{}

func (*AnyOf) LocalizedString(p *message.Printer) string {
	return p.Sprintf("'anyOf' failed")
}

// --

type OneOf struct {
	// Subschemas gives indexes of Subschemas that have matched.
	// Value nil, means none of the subschemas matched.
	Subschemas []int
}

func (k *OneOf) LocalizedString(p *message.Printer) string {
	if len(k.Subschemas) == 0 {
		return p.Sprintf("'oneOf' failed, none matched")
	}
	return p.Sprintf("'oneOf' failed, subschemas %d, %d matched", k.Subschemas[0], k.Subschemas[1])
}

//--

type FalseSchema struct{}

func (*FalseSchema) LocalizedString(p *message.Printer) string {
	return p.Sprintf("false schema")
}

// --

type RefCycle struct {
	URL              string
	KeywordLocation1 string
	KeywordLocation2 string
}

func (k *RefCycle) LocalizedString(p *message.Printer) string {
	return p.Sprintf("both %s and %s resolve to %q causing reference cycle", k.KeywordLocation1, k.KeywordLocation2, k.URL)
}

// --

type Type struct {
	Got  string
	Want []string
}

func (k *Type) LocalizedString(p *message.Printer) string {
	return p.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))
}

// --

type Enum struct {
	Got  any
	Want []any
}

func (k *Enum) LocalizedString(p *message.Printer) string {
	switch {
	case slices.ContainsFunc(k.Want, composite):
		return p.Sprintf("'enum' failed")
	case len(k.Want) == 1:
		return p.Sprintf("value must be %s", display(k.Want[0]))
	}
	want := make([]string, len(k.Want))
	for i, v := range k.Want {
		want[i] = display(v)
	}
	return p.Sprintf("value must be one of %s", strings.Join(want, ", "))
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

func (k *Const) LocalizedString(p *message.Printer) string {
	if composite(k.Want) {
		return p.Sprintf("'const' failed")
	}
	return p.Sprintf("value must be %s", display(k.Want))
}

// --

type Format struct {
	Got  any
	Want string
	Err  error
}

func (k *Format) LocalizedString(p *message.Printer) string {
	msg := k.Err.Error()
	if err, ok := k.Err.(interface{ LocalizedError(*message.Printer) string }); ok {
		msg = err.LocalizedError(p)
	}
	return p.Sprintf("%s is not valid %s: %v", display(k.Got), k.Want, msg)
}

// --

type Reference struct {
	Keyword string
	URL     string
}

func (*Reference) LocalizedString(p *message.Printer) string {
	return p.Sprintf("validation failed")
}

// --

type MinProperties struct {
	Got, Want int
}

func (k *MinProperties) LocalizedString(p *message.Printer) string {
	return p.Sprintf("minProperties: got %d, want %d", k.Got, k.Want)
}

// --

type MaxProperties struct {
	Got, Want int
}

func (k *MaxProperties) LocalizedString(p *message.Printer) string {
	return p.Sprintf("maxProperties: got %d, want %d", k.Got, k.Want)
}

// --

type MinItems struct {
	Got, Want int
}

func (k *MinItems) LocalizedString(p *message.Printer) string {
	return p.Sprintf("minItems: got %d, want %d", k.Got, k.Want)
}

// --

type MaxItems struct {
	Got, Want int
}

func (k *MaxItems) LocalizedString(p *message.Printer) string {
	return p.Sprintf("maxItems: got %d, want %d", k.Got, k.Want)
}

// --

type AdditionalItems struct {
	Count int
}

func (k *AdditionalItems) LocalizedString(p *message.Printer) string {
	return p.Sprintf("last %d additionalItem(s) not allowed", k.Count)
}

// --

type Required struct {
	Missing []string
}

func (k *Required) LocalizedString(p *message.Printer) string {
	if len(k.Missing) == 1 {
		return p.Sprintf("missing property %s", quote(k.Missing[0]))
	}
	return p.Sprintf("missing properties %s", joinQuoted(k.Missing, ", "))
}

// --

type Dependency struct {
	Prop    string   // dependency of prop that failed
	Missing []string // missing props
}

func (k *Dependency) LocalizedString(p *message.Printer) string {
	return p.Sprintf("properties %s required, if %s exists", joinQuoted(k.Missing, ", "), quote(k.Prop))
}

// --

type DependentRequired struct {
	Prop    string   // dependency of prop that failed
	Missing []string // missing props
}

func (k *DependentRequired) LocalizedString(p *message.Printer) string {
	return p.Sprintf("properties %s required, if %s exists", joinQuoted(k.Missing, ", "), quote(k.Prop))
}

// --

type AdditionalProperties struct {
	Properties []string
}

func (k *AdditionalProperties) LocalizedString(p *message.Printer) string {
	return p.Sprintf("additional properties %s not allowed", joinQuoted(k.Properties, ", "))
}

// --

type PropertyNames struct {
	Property string
}

func (k *PropertyNames) LocalizedString(p *message.Printer) string {
	return p.Sprintf("invalid propertyName %s", quote(k.Property))
}

// --

type UniqueItems struct {
	Duplicates [2]int
}

func (k *UniqueItems) LocalizedString(p *message.Printer) string {
	return p.Sprintf("items at %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
}

// --

type Contains struct{}

func (*Contains) LocalizedString(p *message.Printer) string {
	return p.Sprintf("no items match contains schema")
}

// --

type MinContains struct {
	Got  []int
	Want int
}

func (k *MinContains) LocalizedString(p *message.Printer) string {
	if len(k.Got) == 0 {
		return p.Sprintf("min %d items required to match contains schema, but none matched", k.Want)
	}
	got := fmt.Sprintf("%v", k.Got)
	return p.Sprintf("min %d items required to match contains schema, but matched %d items at %v", k.Want, len(k.Got), got[1:len(got)-1])
}

// --

type MaxContains struct {
	Got  []int
	Want int
}

func (k *MaxContains) LocalizedString(p *message.Printer) string {
	got := fmt.Sprintf("%v", k.Got)
	return p.Sprintf("max %d items required to match contains schema, but matched %d items at %v", k.Want, len(k.Got), got[1:len(got)-1])
}

// --

type MinLength struct {
	Got, Want int
}

func (k *MinLength) LocalizedString(p *message.Printer) string {
	return p.Sprintf("minLength: got %d, want %d", k.Got, k.Want)
}

// --

type MaxLength struct {
	Got, Want int
}

func (k *MaxLength) LocalizedString(p *message.Printer) string {
	return p.Sprintf("maxLength: got %d, want %d", k.Got, k.Want)
}

// --

type Pattern struct {
	Got  string
	Want string
}

func (k *Pattern) LocalizedString(p *message.Printer) string {
	return p.Sprintf("%s does not match pattern %s", quote(k.Got), quote(k.Want))
}

// --

type Minimum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *Minimum) LocalizedString(p *message.Printer) string {
	return bound(p, "minimum", k.Got, k.Want)
}

// --

type Maximum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *Maximum) LocalizedString(p *message.Printer) string {
	return bound(p, "maximum", k.Got, k.Want)
}

// --

type ExclusiveMinimum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *ExclusiveMinimum) LocalizedString(p *message.Printer) string {
	return bound(p, "exclusiveMinimum", k.Got, k.Want)
}

// --

type ExclusiveMaximum struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *ExclusiveMaximum) LocalizedString(p *message.Printer) string {
	return bound(p, "exclusiveMaximum", k.Got, k.Want)
}

// --

type MultipleOf struct {
	Got  *big.Rat
	Want *big.Rat
}

func (k *MultipleOf) LocalizedString(p *message.Printer) string {
	return bound(p, "multipleOf", k.Got, k.Want)
}

// --

// bound is the message of a numeric keyword's failure, got and want as
// floats.
func bound(p *message.Printer, keyword string, got, want *big.Rat) string {
	g, _ := got.Float64()
	w, _ := want.Float64()
	return p.Sprintf("%s: got %v, want %v", keyword, g, w)
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
