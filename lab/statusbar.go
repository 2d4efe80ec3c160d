package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
)

// statusBar is the line above the help bar: what the last action did, in
// as many words as the line has room for, or, when nothing was done, the
// screen's hint of what to do next. The root owns it; a screen's Update
// is handed it to say what a key did.
type statusBar struct {
	status    string
	statusErr bool
	// statusShorter holds the status in fewer and fewer words, for a line
	// too narrow for the whole one: the first that fits is shown.
	statusShorter []string
	// statusOnlyHere is whether the status is about the screen it was set
	// on, and goes when the person leaves it.
	statusOnlyHere bool
	// exportedTo is the short form of an export's status, for a line too
	// narrow for the whole one: words, a path cut from the left so the
	// end of a file name stays in sight, then words.
	exportedTo struct {
		lead, path, tail string
		// folder: path is the folder of several cases, not a file.
		folder bool
	}
}

// setStatus puts s on the status line; where it is too wide, the first
// of shorter that fits takes its place.
func (b *statusBar) setStatus(s string, shorter ...string) {
	b.status, b.statusErr, b.statusShorter, b.statusOnlyHere, b.exportedTo.path, b.exportedTo.folder = s, false, shorter, false, "", false
}

func (b *statusBar) setError(err error) {
	b.status, b.statusErr, b.statusShorter, b.statusOnlyHere, b.exportedTo.path = err.Error(), true, nil, false, ""
}

// leftScreen drops a status that was only about the screen left.
func (b *statusBar) leftScreen() {
	if b.statusOnlyHere {
		b.setStatus("")
	}
}

// view renders the status, or hint (the first of its forms that fits)
// when there is none, in w cells.
func (b *statusBar) view(st *Styles, w int, hint []string) string {
	if b.status != "" {
		s := st.Status
		if b.statusErr {
			s = st.StatusError
		}
		line := termtext.CleanLine(b.status)
		if to := b.exportedTo; ansi.StringWidth(line) > w && to.path != "" {
			fitted := pathFit(termtext.CleanLine(to.path), w-ansi.StringWidth(to.lead+to.tail))
			if whole := filepath.Base(to.path); to.folder && !strings.HasSuffix(fitted, whole) {
				// Not even the folder's own name fits whole: the
				// shorter forms say it without one.
				fitted = strings.Repeat(" ", w)
			}
			line = to.lead + fitted + to.tail
		}
		if ansi.StringWidth(line) > w {
			line = firstFit(line, b.statusShorter, w)
		}
		return s.Render(cut(line, w))
	}
	if len(hint) == 0 {
		return ""
	}
	return st.Subtle.Render(cut(firstFit(hint[0], hint[1:], w), w))
}

// exported reports a finished export. A path too long for the line loses
// its beginning, never the end of the file name, where a numeric suffix
// tells a second export apart.
func (b *statusBar) exported(msg exportedMsg, w int) {
	b.exportedPaths(msg, w)
	if msg.recorded > 0 && msg.err == nil {
		// Said last, so that the words of the files keep their place.
		b.status += "; your client's recorded run is its session file already"
		for i := range b.statusShorter {
			b.statusShorter[i] += "; the recorded run is its file"
		}
		b.exportedTo.tail += "; the recorded run is its file"
	}
}

// exportedPaths says where a finished export put its files.
func (b *statusBar) exportedPaths(msg exportedMsg, w int) {
	names := make([]string, len(msg.paths))
	for i, p := range msg.paths {
		names[i] = filepath.Base(p)
	}
	switch {
	case msg.err != nil && len(msg.paths) > 0:
		b.setError(fmt.Errorf("exported %s, then failed: %w", strings.Join(msg.paths, ", "), msg.err))
	case msg.err != nil:
		b.setError(fmt.Errorf("export failed: %w", msg.err))
	case len(msg.paths) == 1 && msg.same == 1:
		b.setStatus("already exported: " + msg.paths[0] + " holds this very case")
		b.exportedTo.lead, b.exportedTo.path, b.exportedTo.tail = "already exported: ", msg.paths[0], ""
	case msg.same == len(msg.paths):
		dir := filepath.Dir(msg.paths[0])
		lead := fmt.Sprintf("already exported: the %d cases are in ", len(msg.paths))
		tail := " byte for byte, so nothing was written"
		b.setStatus(lead+dir+tail, fmt.Sprintf("already exported: the %d cases are there, byte for byte", len(msg.paths)),
			"already exported, byte for byte")
		b.exportedTo.lead, b.exportedTo.path, b.exportedTo.tail, b.exportedTo.folder = lead, dir, tail, true
	case len(msg.paths) == 1:
		tail := ""
		if msg.renamed > 0 {
			// The name the person would look for holds an earlier export.
			tail = " (" + takenName(names[0]) + " was there already)"
		}
		b.setStatus("exported the full run to " + msg.paths[0] + tail)
		b.exportedTo.lead, b.exportedTo.path, b.exportedTo.tail = "exported to ", msg.paths[0], ""
		if tail != "" {
			b.exportedTo.tail = "; the name was taken"
		}
	default:
		dir := filepath.Dir(msg.paths[0])
		lead, tail := fmt.Sprintf("exported %d cases to ", len(msg.paths)), ""
		if msg.same > 0 {
			lead = fmt.Sprintf("exported %d of %d cases to ", len(msg.paths)-msg.same, len(msg.paths))
		}
		s := lead + dir + ": " + strings.Join(names, ", ")
		if msg.renamed > 0 {
			// Names were taken: the suffixed files are not where the
			// person would look first.
			tail = fmt.Sprintf("; %d got a -N suffix, the name being taken", msg.renamed)
			if msg.renamed == 1 {
				tail = "; 1 got a -N suffix, its name being taken"
			}
			s += tail
		}
		if msg.same > 0 {
			// Already there, the same bytes: nothing new was written for
			// them.
			same := fmt.Sprintf("; %d was already there, the same", msg.same)
			if msg.same > 1 {
				same = fmt.Sprintf("; %d were already there, the same", msg.same)
			}
			s, tail = s+same, tail+same
		}
		if ansi.StringWidth(s) > w {
			// Too many names to read on one line: say where they are.
			s = lead + dir + tail
			if tail == "" {
				s += ", one .json file per case"
			}
		}
		b.setStatus(s, fmt.Sprintf("exported %d cases, one .json file per case", len(msg.paths)))
		b.exportedTo.lead, b.exportedTo.path, b.exportedTo.tail, b.exportedTo.folder = lead, dir, tail, true
	}
}

// takenName is the name a file was meant to have before a -N suffix was
// added to it because that name was taken.
func takenName(name string) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	if i := strings.LastIndexByte(base, '-'); i > 0 && strings.Trim(base[i+1:], "0123456789") == "" && i+1 < len(base) {
		base = base[:i]
	}
	return base + ext
}

// firstFit is line when it fits in w cells, else the first of shorter
// that does, else the shortest of them, to be cut.
func firstFit(line string, shorter []string, w int) string {
	if ansi.StringWidth(line) <= w {
		return line
	}
	for _, s := range shorter {
		line = termtext.CleanLine(s)
		if ansi.StringWidth(line) <= w {
			break
		}
	}
	return line
}

// pathFit is a path in at most w cells: whole, or with the home
// directory as ~, or with its leading folders left out whole ("…/cases/
// x.json"), so that no name is cut in the middle; only a file name wider
// than w alone is cut, from the left, to keep its end.
func pathFit(path string, w int) string {
	if ansi.StringWidth(path) <= w {
		return path
	}
	if home := homeDir(); home != "" && strings.HasPrefix(path, home+string(filepath.Separator)) {
		path = "~" + path[len(home):]
		if ansi.StringWidth(path) <= w {
			return path
		}
	}
	parts := strings.Split(path, string(filepath.Separator))
	for i := 1; i < len(parts); i++ {
		if p := "…" + string(filepath.Separator) + strings.Join(parts[i:], string(filepath.Separator)); ansi.StringWidth(p) <= w {
			return p
		}
	}
	return leftCut(parts[len(parts)-1], w)
}

// homeDir is the home directory, read once: a view depends on nothing
// that can change while the lab runs.
var homeDir = sync.OnceValue(func() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return home
})
