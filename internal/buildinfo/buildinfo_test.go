package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "5bf2448abcdef0123456789"}}
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"a tag", debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{"a pseudo-version", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261203052400-5bf2448abcde+dirty"}, Settings: rev}, "v0.0.0-20261203052400-5bf2448abcde+dirty"},
		{"go run in a checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "devel 5bf2448abcde"},
		{"changed files", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "devel 5bf2448abcde+dirty"},
		{"nothing stamped", debug.BuildInfo{}, "devel"},
	} {
		if got := fromInfo(&tc.bi); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLineNamesTheGoThatBuiltIt(t *testing.T) {
	l := Line()
	if !strings.HasPrefix(l, "replaylab "+Version()+" (") || !strings.Contains(l, runtime.Version()) {
		t.Fatalf("Line() = %q", l)
	}
}
