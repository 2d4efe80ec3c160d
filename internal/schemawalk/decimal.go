package schemawalk

import (
	"cmp"
	"strings"
)

// decimal is a JSON number as its sign, its significant digits and an
// exponent: the value is ±0.digits × 10^exp, and zero has no digits. It
// compares and tells a whole number from its text alone, whatever its
// size: 1e999999 costs no more than 1e9, where big.Rat would build the
// number.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp bounds an exponent; past it every number compares the same.
const maxExp = 1 << 50

// parseDecimal reads a number as JSON writes one.
func parseDecimal(raw string) decimal {
	var d decimal
	if strings.HasPrefix(raw, "-") {
		d.neg, raw = true, raw[1:]
	}
	mant, e, _ := strings.Cut(strings.ToLower(raw), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	var exp int64
	if e != "" {
		neg := strings.HasPrefix(e, "-")
		e = strings.TrimLeft(e, "+-")
		for _, c := range e {
			exp = min(exp*10+int64(c-'0'), maxExp)
		}
		if neg {
			exp = -exp
		}
	}
	all := intPart + frac
	point := int64(len(intPart))
	trimmed := strings.TrimLeft(all, "0")
	point -= int64(len(all) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		return decimal{} // zero, -0 included
	}
	d.exp = max(min(point+exp, maxExp), -maxExp)
	return d
}

// whole reports whether the number's value is a whole number.
func (d decimal) whole() bool { return d.digits == "" || d.exp >= int64(len(d.digits)) }

// cmp compares two numbers by value: -1, 0 or 1.
func (d decimal) cmp(o decimal) int {
	sign := func(x decimal) int {
		switch {
		case x.digits == "":
			return 0
		case x.neg:
			return -1
		}
		return 1
	}
	sd, so := sign(d), sign(o)
	if sd != so || sd == 0 {
		return cmp.Compare(sd, so)
	}
	c := 0
	switch {
	case d.exp != o.exp:
		c = cmp.Compare(d.exp, o.exp)
	default:
		// The same exponent: the digits decide, a missing one a zero.
		a, b := d.digits, o.digits
		for len(a) < len(b) {
			a += "0"
		}
		for len(b) < len(a) {
			b += "0"
		}
		c = strings.Compare(a, b)
	}
	return c * sd
}
