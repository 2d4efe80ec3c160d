package serve

import (
	"maps"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/serve/internal/boltlog"
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
	enc := encodeForm(p.digested(true))
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

// TestAnUpdateKeepsTheFormOfItsPayload: a session or database recorded
// before payloads kept their characters (PayloadUTF8 false) goes on
// writing its updates fully escaped, as it did, even for a refund whose
// payload reads the same in both forms (no metadata, a top-level intent
// field), so that it reopens and replays to the same bytes; a new one
// writes encode's form.
func TestAnUpdateKeepsTheFormOfItsPayload(t *testing.T) {
	p := refundParams{Charge: "ch_1", Amount: 100, Metadata: map[string]string{}}
	for _, utf8 := range []bool{false, true} {
		c, err := newCore(Options{IntentField: "charge"})
		if err != nil {
			t.Fatal(err)
		}
		c.session.Settings.PayloadUTF8 = utf8
		c.create("ch_1", "k1", "d1", c.encode(p), scheduled{fixture: "success"}, nil)
		if _, _, e := c.update("re_0001", map[string]string{"note": "a b/é"}); e != nil {
			t.Fatalf("update: %s", e.why)
		}
		o, _ := c.led.Object(1)
		want := p
		want.Metadata = map[string]string{"note": "a b/é"}
		form := encodeForm(want.digested(true))
		if !utf8 {
			form = encodeEscapedForm(want.digested(true))
		}
		if o.Payload != form {
			t.Errorf("PayloadUTF8 %v: the updated payload is %q, want %q", utf8, o.Payload, form)
		}
	}
}

// TestADatabaseKeepsItsPayloadForm: a database made before payloads kept
// their characters has no payload_utf8 in its settings; reopened, its
// session says so and its new payloads are fully escaped, as before.
func TestADatabaseKeepsItsPayloadForm(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	g, _ := openRig(t, Options{}, db, clock)
	if !g.srv.Session().Settings.PayloadUTF8 {
		t.Fatal("a new database does not keep payloads as UTF-8")
	}
	g.stop()
	log, err := boltlog.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	st := boltStorage{log}
	meta, _, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	meta.Settings.PayloadUTF8 = false // as a database from before
	if err := st.Reset(*meta); err != nil {
		t.Fatal(err)
	}
	st.Close()
	g2, _ := openRig(t, Options{}, db, clock)
	defer g2.stop()
	if g2.srv.Session().Settings.PayloadUTF8 {
		t.Fatal("a database from before was reopened as one that keeps payloads as UTF-8")
	}
	g2.create("k1")
	if p := g2.srv.Session().Requests[0].Payload; !strings.Contains(p, "metadata%5Bintent%5D") {
		t.Fatalf("a create in a database from before has the payload %q, not the escaped form", p)
	}
}
