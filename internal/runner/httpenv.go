package runner

import (
	"strings"

	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// EnvHTTPURLPrefix begins the variable of each world package's own HTTP
// API: DRYFIRE_HTTP_URL_PAYMENTS for package payments (upper case, every
// character other than a letter or digit as _).
const EnvHTTPURLPrefix = "DRYFIRE_HTTP_URL_"

// HTTPEnvName is the variable that holds a package's base URL.
func HTTPEnvName(pkg string) string {
	var b strings.Builder
	b.WriteString(EnvHTTPURLPrefix)
	for _, c := range strings.ToUpper(pkg) {
		if c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// httpEnv are the base URLs of a world suite's package APIs served at
// prefix, in package order: DRYFIRE_HTTP_URL_PACKAGE, and the variable
// the package names (http.env), the one the agent already reads.
func httpEnv(prefix string, sw *world.SuiteWorld) [][2]string {
	if sw == nil {
		return nil
	}
	var out [][2]string
	for _, name := range sw.World.PackageList {
		ph := sw.World.Packages[name].HTTP
		if ph == nil {
			continue
		}
		url := prefix + toolserver.HTTPPath(name)
		out = append(out, [2]string{HTTPEnvName(name), url})
		if ph.Env != "" {
			out = append(out, [2]string{ph.Env, url})
		}
	}
	return out
}
