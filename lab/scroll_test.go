package lab

import "testing"

// The scroller never leaves its lines, whichever way it is pushed, and
// shows at most a screenful from its offset.
func TestScrollerStaysOnItsLines(t *testing.T) {
	var s scroller
	s.moveBy(-3, 10)
	if s.offset != 0 {
		t.Errorf("up from the top: %d", s.offset)
	}
	s.moveBy(25, 10)
	if s.offset != 10 {
		t.Errorf("past the end: %d", s.offset)
	}
	s.clampTo(4)
	if s.offset != 4 {
		t.Errorf("after fewer lines: %d", s.offset)
	}
	s.clampTo(-2)
	if s.offset != 0 {
		t.Errorf("with nothing to scroll: %d", s.offset)
	}
	s.offset = 3
	if a, b := s.window(5, 10); a != 3 || b != 5 {
		t.Errorf("window of 5 lines from 3 in 10 rows: %d–%d", a, b)
	}
}
