package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The rooms of the repository and their floors, as docs/architecture.md
// draws them: a package imports only packages on lower floors. A package
// that is in no room fails the test, so a new one is placed on purpose.
var floors = map[string]int{
	"internal/": 0, // every helper under internal/: see internalOnly
	"ledger":    1,
	"providers": 2, // the profiles: the YAML format and the built-ins
	"missions":  3,

	"missions/missionstest": 4,
	"export":                4,

	"render": 5,
	"traces": 5,

	"serve/internal/boltlog": 5, // serve's log file: bytes only, it imports nothing of the repository

	"compare": 6,
	"course":  6,
	"check":   6,
	"serve":   6,

	"reproduce": 7,

	"conform": 8,
	"lab":     8,

	"internal/cli": 9, // the commands

	"": 10, // main: wiring alone; it imports internal/cli and nothing else of the repository

	"examples/": 11, // client programs, which see nothing of replaylab: see examplesAlone
}

// engine is the pure part: no terminal, no network, no clock, no
// process, no file but through an fs.FS handed in.
var engine = []string{"ledger", "providers", "missions"}

// notInTheEngine are what the engine's packages may not import directly
// (os is what path/filepath stands on, so it is checked by name only
// here, not through the dependencies).
var notInTheEngine = []string{"os", "os/exec", "net", "net/http", "time", "syscall"}

// terminalAndNetwork are libraries no package of the engine, the formats
// or the renderings may depend on at any depth: text for people is
// rendered to strings, and the terminal belongs to lab and main.
var terminalAndNetwork = []string{
	"github.com/charmbracelet/bubbletea", "github.com/charmbracelet/bubbles", "github.com/charmbracelet/lipgloss",
	"github.com/spf13/cobra", "github.com/charmbracelet/x/term", "github.com/muesli/termenv", "net/http",
}

var pure = []string{"ledger", "providers", "missions", "export", "render", "traces", "compare", "course"}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
	Standard   bool
}

// TestImportsPointDown holds the layering: it reads `go list -deps -json
// ./...` and fails for every import that points up or sideways, every
// internal/ helper that imports the repository outside internal/, every
// example that imports replaylab, and every terminal or network library
// in the pure rooms.
func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json", "./...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/replaylab/replaylab"
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from, ours := rel(p.ImportPath)
		if !ours {
			continue
		}
		seen++
		floor, room, ok := floorOf(from)
		if !ok {
			t.Errorf("%s is in no room: give it a floor in architecture_test.go and docs/architecture.md", show(from))
			continue
		}
		for _, imp := range p.Imports {
			to, ours := rel(imp)
			if !ours {
				continue
			}
			toFloor, toRoom, ok := floorOf(to)
			switch {
			case !ok:
				continue // reported as its own package
			case room == "internal/" && toRoom != "internal/":
				t.Errorf("%s is a helper under internal/ and imports %s: a helper imports nothing of the repository but other helpers", show(from), show(to))
			case room == "examples/" && !strings.HasPrefix(to, "examples/"):
				t.Errorf("%s is an example client and imports %s: an example stands for a user's own program and sees nothing of replaylab", show(from), show(to))
			case room == "internal/" || room == "examples/":
				// helpers among helpers, examples among examples
			case room == "" && to != "internal/cli":
				t.Errorf("main imports %s: main only hands the process to internal/cli, which holds the commands", show(to))
			case toFloor >= floor:
				t.Errorf("%s (floor %d) imports %s (floor %d): imports point down only", show(from), floor, show(to), toFloor)
			}
		}
		if slices.Contains(engine, from) {
			for _, imp := range p.Imports {
				if slices.Contains(notInTheEngine, imp) {
					t.Errorf("%s is the engine and imports %s: the engine does no I/O and reads no clock", show(from), imp)
				}
			}
		}
		if slices.Contains(pure, from) {
			for _, dep := range p.Deps {
				for _, lib := range terminalAndNetwork {
					if dep == lib || strings.HasPrefix(dep, lib+"/") {
						t.Errorf("%s depends on %s: only lab, serve, conform and main may reach a terminal or the network", show(from), dep)
					}
				}
			}
		}
	}
	if seen < 15 {
		t.Fatalf("go list named only %d packages of the module; the test lost its way", seen)
	}
}

// floorOf finds the room a package is in: its own name, or the folder it
// is under (internal/, examples/).
func floorOf(pkg string) (floor int, room string, ok bool) {
	if f, ok := floors[pkg]; ok {
		return f, pkg, true
	}
	for room, f := range floors {
		if strings.HasSuffix(room, "/") && strings.HasPrefix(pkg, room) {
			return f, room, true
		}
	}
	return 0, "", false
}

func show(pkg string) string {
	if pkg == "" {
		return "main"
	}
	return pkg
}

// TestFloorsRefuseAnUpwardImport: the rule the layering test applies
// would catch the imports it is there to catch.
func TestFloorsRefuseAnUpwardImport(t *testing.T) {
	for _, tt := range []struct{ from, to string }{
		{"missions", "export"}, {"export", "render"}, {"serve", "reproduce"}, {"render", "compare"}, {"course", "compare"},
	} {
		f, _, _ := floorOf(tt.from)
		g, _, _ := floorOf(tt.to)
		if g < f {
			t.Errorf("%s → %s would pass", tt.from, tt.to)
		}
	}
	if _, room, _ := floorOf("internal/termtext"); room != "internal/" {
		t.Errorf("internal/termtext is in room %q", room)
	}
	if _, _, ok := floorOf("newroom"); ok {
		t.Error("a package in no room has a floor")
	}
}
