package dryfire

// The one place where the public types meet the internal ones: every
// conversion between them, both ways, is here.

import (
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

func specDiagnostic(d Diagnostic) yamlpos.Diagnostic {
	return yamlpos.Diagnostic{Pos: yamlpos.Pos(d.Pos), Severity: yamlpos.Severity(d.Severity), Message: d.Message}
}

func specDiagnostics(ds Diagnostics) yamlpos.Diagnostics {
	out := make(yamlpos.Diagnostics, len(ds))
	for i, d := range ds {
		out[i] = specDiagnostic(d)
	}
	return out
}

func diagnosticsOf(ds yamlpos.Diagnostics) Diagnostics {
	if ds == nil {
		return nil
	}
	out := make(Diagnostics, len(ds))
	for i, d := range ds {
		out[i] = Diagnostic{Pos: Pos(d.Pos), Severity: Severity(d.Severity), Message: d.Message}
	}
	return out
}

// publicError is err with the internal Diagnostics it may be replaced by
// the public ones.
func publicError(err error) error {
	if ds, ok := err.(yamlpos.Diagnostics); ok {
		return diagnosticsOf(ds)
	}
	return err
}
