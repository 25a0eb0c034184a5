package spec

import (
	"strings"
	"testing"
)

// The value-count error names its cause: aliases when they made the
// copies, the document itself when it has none.
func TestDocumentTooLargeNamesItsCause(t *testing.T) {
	defer func(n int) { maxNodes = n }(maxNodes)
	maxNodes = 1000
	plain := "version: 1\nagent: {provider: script}\nmocks: {t: [{return: [" + strings.Repeat("1,", maxNodes) + "1]}]}\ncases: [{name: a, input: hi, script: [{text: ok}]}]\n"
	_, ds := Parse("big.dryfire.yaml", []byte(plain), nil)
	if got := ds.Error(); !strings.Contains(got, "document too large: more than 1000 values; split it into several files") {
		t.Errorf("without aliases: %s", got)
	}
	_, ds = Parse("bomb.dryfire.yaml", []byte(billionLaughs()), nil)
	if got := ds.Error(); !strings.Contains(got, "values once aliases are expanded") {
		t.Errorf("billion laughs: %s", got)
	}
}
