// Package buildinfo reports the version a binary was built as.
package buildinfo

import "runtime/debug"

// Version returns override when set (from -ldflags "-X main.version=..."),
// otherwise the main module's version from the build info: the tag for a
// binary installed with "go install ...@v0.3.1", "(devel)" in a checkout.
func Version(override string) string {
	if override != "" {
		return override
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
