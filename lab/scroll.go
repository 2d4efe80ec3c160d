package lab

// scroller is the one scroll position of the panels whose lines can
// outnumber their rows: the evidence bundle, the ledger and the compare
// screen's attempts. Embedded, its offset is the panel's first line shown;
// the keys that move it are scrollKeys, and it never leaves the lines.
// (The timeline follows a cursor and the transcript counts from its
// newest entry; the glossary is bubbles' viewport.)
type scroller struct {
	offset int
}

// moveBy moves the offset d lines, keeping it from 0 to last.
func (s *scroller) moveBy(d, last int) { s.offset = clamp(s.offset+d, 0, max(0, last)) }

// clampTo keeps the offset from 0 to last, as after a resize.
func (s *scroller) clampTo(last int) { s.moveBy(0, last) }

// window is the lines shown of total in rows: from the offset, at most
// rows of them.
func (s scroller) window(total, rows int) (start, end int) {
	return s.offset, min(total, s.offset+rows)
}
