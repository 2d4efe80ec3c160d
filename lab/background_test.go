package lab

import (
	"os"
	"testing"
	"time"
)

func TestParseBackground(t *testing.T) {
	cases := []struct {
		answer   string
		dark, ok bool
	}{
		{"\x1b]11;rgb:0000/0000/0000\x07\x1b[1;1R", true, true},
		{"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[3;7R", false, true},
		{"\x1b]11;rgb:fd/f6/e3\x07", false, true},
		{"\x1b]11;rgb:1e1e/1e1e/2e2e\x07", true, true},
		{"\x1b[12;40R", true, false},
		{"", true, false},
	}
	for _, tc := range cases {
		dark, ok := parseBackground([]byte(tc.answer))
		if dark != tc.dark || ok != tc.ok {
			t.Errorf("%q: dark %v ok %v, want %v %v", tc.answer, dark, ok, tc.dark, tc.ok)
		}
	}
}

// A terminal that answers nothing keeps the lab waiting only for
// backgroundWait; one that answers is read as soon as its cursor report
// arrives. Told in the order of events, not by a clock: the silent
// terminal is given nothing, so a read that returns gave up on its own;
// the answering one is given an hour, so a read that returns read the
// answer.
func TestReadBackgroundIsBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, ok := readBackground(int(r.Fd()), 150*time.Millisecond); ok {
		t.Fatal("silence read as an answer")
	}
	go w.WriteString("\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[5;1R")
	dark, ok := readBackground(int(r.Fd()), time.Hour)
	if !ok || dark {
		t.Fatalf("a light answer read as dark %v ok %v", dark, ok)
	}
}
