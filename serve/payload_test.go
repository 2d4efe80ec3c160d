package serve

import (
	"maps"
	"net/url"
	"strings"
	"testing"
)

// TestPayloadsKeepTheirBytes: a refund's payload keeps every character
// as its UTF-8 and escapes only what would break a query, so a refund in
// 4-byte characters keeps 4 bytes for each, not the 12 of a full
// percent-escape; a payload written fully escaped, as sessions and
// databases before hold them, reads the same.
func TestPayloadsKeepTheirBytes(t *testing.T) {
	p := refundParams{Charge: "ch_" + strings.Repeat("😀", 100), Amount: 4500, Currency: "usd",
		Other:    map[string]string{"reason": "duplicate"},
		Metadata: map[string]string{"intent": "refund-1042", "note": "a&b=c+d%e;f#g h\nj", "né": strings.Repeat("€", 50)}}
	enc := p.encode()
	back := parsePayload(enc)
	if !maps.Equal(back.bound(), p.bound()) || !maps.Equal(back.Metadata, p.Metadata) {
		t.Fatalf("the payload %q gives back %+v, not %+v", enc, back, p)
	}
	if want := 4*100 + 3*50; len(enc) > want+200 {
		t.Errorf("the payload takes %d bytes for %d bytes of characters: %q", len(enc), want, enc)
	}
	old := url.Values{}
	for k, v := range p.bound() {
		old.Set(k, v)
	}
	for k, v := range p.Metadata {
		old.Set("metadata["+k+"]", v)
	}
	was := parsePayload(old.Encode())
	if !maps.Equal(was.bound(), p.bound()) || !maps.Equal(was.Metadata, p.Metadata) {
		t.Fatalf("a fully escaped payload gives back %+v, not %+v", was, p)
	}
	if q, err := url.ParseQuery(enc); err != nil || q.Get("metadata[note]") != p.Metadata["note"] {
		t.Fatalf("url.ParseQuery reads the payload as %v (%v)", q, err)
	}
}

// TestAnUpdateKeepsTheFormOfItsPayload: a refund created from a payload in
// the fully escaped form (as databases and sessions recorded before hold
// it) keeps that form when it is updated, so that they reopen and replay
// to the same bytes; one created now keeps encode's.
func TestAnUpdateKeepsTheFormOfItsPayload(t *testing.T) {
	p := refundParams{Charge: "ch_1", Amount: 100, Metadata: map[string]string{"intent": "i1", "note": "é"}}
	for _, tc := range []struct {
		name, payload string
		want          func(refundParams) string
	}{
		{"escaped", p.encodeEscaped(), refundParams.encodeEscaped},
		{"as it is", p.encode(), refundParams.encode},
	} {
		c, err := newCore(Options{})
		if err != nil {
			t.Fatal(err)
		}
		c.create("i1", "k1", "d1", tc.payload, scheduled{fixture: "success"}, nil)
		if _, _, e := c.update("re_0001", map[string]string{"extra": "x/y"}); e != nil {
			t.Fatalf("%s: update: %s", tc.name, e.Message)
		}
		o, _ := c.led.Object(1)
		want := p
		want.Metadata = map[string]string{"intent": "i1", "note": "é", "extra": "x/y"}
		if o.Payload != tc.want(want) {
			t.Errorf("%s: the updated payload is %q, want %q", tc.name, o.Payload, tc.want(want))
		}
	}
	if escapedPayload(p.encode()) || !escapedPayload(p.encodeEscaped()) {
		t.Error("escapedPayload does not tell the two forms apart")
	}
}
