package render

// DefaultTextWidth is the width text output assumes when it cannot ask a
// terminal.
const DefaultTextWidth = 100

// MinTextWidth is the narrowest width text output lays itself out for;
// narrower requests are laid out at this width.
const MinTextWidth = 40
