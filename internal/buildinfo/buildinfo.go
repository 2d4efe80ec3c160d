// Package buildinfo says which replaylab this is, from the information
// the Go toolchain stamps into every binary it builds: the module's
// version (a tag, or a pseudo-version made from the commit), else the
// commit the source was built from, as Go's own command lines read it.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Version is this binary's version: "v1.2.0", "v0.0.0-20261203052400-5bf2448abcde+dirty",
// or, for a build with no version stamped (go run, go test), "devel"
// followed by the commit when one is known.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromInfo(bi)
}

// Line is what replaylab --version and replaylab version print: the
// name, the version, and the Go that built it.
func Line() string {
	return "replaylab " + Version() + " (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

func fromInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return "devel " + rev
}
