package lab

import (
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"golang.org/x/sys/unix"
)

// backgroundWait bounds how long the lab waits for the terminal to say
// its background colour. Left to lipgloss, the query waits 5 s on a
// terminal that answers nothing, and reads the keys typed meanwhile.
const backgroundWait = 400 * time.Millisecond

// The queries: the background colour (OSC 11), then the cursor position
// (DSR), which nearly every terminal answers, so that its answer marks the
// end of whatever the terminal says.
const backgroundQuery = "\x1b]11;?\x07\x1b[6n"

// The answers' patterns, compiled when the lab starts, not with every
// command.
var (
	oscBackground = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\x1b\]11;rgb:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})`)
	})
	cursorReport = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[\d+;\d+R`) })
)

// terminalBackground asks the terminal on in and out whether its
// background is dark, waiting at most wait. It is false for ok when the
// terminal did not say; the lab then takes a dark background.
func terminalBackground(in, out *os.File, wait time.Duration) (dark, ok bool) {
	if !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return true, false
	}
	state, err := term.MakeRaw(in.Fd())
	if err != nil {
		return true, false
	}
	defer term.Restore(in.Fd(), state)
	if _, err := out.WriteString(backgroundQuery); err != nil {
		return true, false
	}
	return readBackground(int(in.Fd()), wait)
}

// readBackground reads the terminal's answers from fd until the cursor
// report arrives or wait runs out, and reads the background from them.
func readBackground(fd int, wait time.Duration) (dark, ok bool) {
	deadline := time.Now().Add(wait)
	var got []byte
	buf := make([]byte, 256)
	for !cursorReport().Match(got) && len(got) < 4096 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		r, err := unix.Read(fd, buf)
		if err != nil || r <= 0 {
			break
		}
		got = append(got, buf[:r]...)
	}
	return parseBackground(got)
}

// parseBackground reads an OSC 11 answer, "\x1b]11;rgb:RRRR/GGGG/BBBB",
// as dark when its luminance is under a half.
func parseBackground(answer []byte) (dark, ok bool) {
	m := oscBackground().FindSubmatch(answer)
	if m == nil {
		return true, false
	}
	var c [3]float64
	for i, h := range m[1:] {
		v, _ := strconv.ParseUint(string(h), 16, 32)
		c[i] = float64(v) / float64(uint64(1)<<(4*len(h))-1)
	}
	lum := 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
	return lum < 0.5, true
}
