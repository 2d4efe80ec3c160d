package serve

import (
	"bytes"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The hand-written bodies are the bytes json.MarshalIndent gives, for
// any refund and list: every string escaped as encoding/json escapes it
// (HTML-safe, U+2028, invalid UTF-8, control bytes), metadata sorted.
func TestRefundBodyIsMarshal(t *testing.T) {
	gen := rapid.OneOf(
		rapid.SampledFrom([]string{"", "re_0001", "usd", "a<b>&c", "quote\"back\\slash", "line\nbreak\ttab\r\x00\x1f\x7f\b\f", "\u2028\u2029", "é漢字😀", "\xff\xfe bad", "\xed\xa0\x80", "\xe2\x80"}),
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	)
	opt := func(t *rapid.T, name string) *string {
		if rapid.Bool().Draw(t, name+"?") {
			v := gen.Draw(t, name)
			return &v
		}
		return nil
	}
	refund := func(t *rapid.T) refundJSON {
		r := refundJSON{
			ID: gen.Draw(t, "id"), Object: "refund", Amount: rapid.Int64().Draw(t, "amount"), Created: rapid.Int64().Draw(t, "created"),
			Currency: gen.Draw(t, "currency"), Status: gen.Draw(t, "status"),
			Charge: opt(t, "charge"), Customer: opt(t, "customer"), InstructionsEmail: opt(t, "email"), PaymentIntent: opt(t, "pi"),
			Reason: opt(t, "reason"), PendingReason: opt(t, "pending"), FailureReason: opt(t, "failure"), Description: opt(t, "description"),
		}
		switch rapid.IntRange(0, 2).Draw(t, "metadata") {
		case 1:
			r.Metadata = map[string]string{}
		case 2:
			r.Metadata = rapid.MapOf(gen, gen).Draw(t, "fields")
		}
		return r
	}
	rapid.Check(t, func(t *rapid.T) {
		r := refund(t)
		if got, want := refundBody(r), marshal(r); !bytes.Equal(got, want) {
			t.Fatalf("refund body\n%s\nmarshal\n%s", got, want)
		}
		l := listJSON{Object: "list", Data: []refundJSON{}, HasMore: rapid.Bool().Draw(t, "more"), URL: "/v1/refunds"}
		for range rapid.IntRange(0, 3).Draw(t, "refunds") {
			l.Data = append(l.Data, refund(t))
		}
		if got, want := listBody(l), marshal(l); !bytes.Equal(got, want) {
			t.Fatalf("list body\n%s\nmarshal\n%s", got, want)
		}
	})
}

// A payload reads as url.ParseQuery reads it, whatever its bytes: the
// parameters, and each value the list index takes alone.
func TestPayloadReadsAsParseQuery(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piece := rapid.SampledFrom([]string{"amount=4500", "charge=ch_1", "charge=ch_2", "payment_intent=pi_1", "currency=usd", "reason=duplicate",
			"metadata[intent]=refund-1", "metadata%5Bintent%5D=refund%2D2", "customer=cus_1", "x=%zz", "y;z=1", "charge=a+b%20c", "ch%61rge=ch_3", "", "=", "amount", "metadata[é]=漢"})
		parts := rapid.SliceOfN(piece, 0, 8).Draw(t, "pairs")
		payload := strings.Join(parts, "&")
		v, _ := url.ParseQuery(payload)
		want := refundParams{Other: map[string]string{}, Metadata: map[string]string{}}
		for name, values := range v {
			x := values[0]
			if field, ok := metadataField(name); ok {
				want.Metadata[field] = x
				continue
			}
			switch name {
			case "charge":
				want.Charge = x
			case "payment_intent":
				want.PaymentIntent = x
			case "amount":
				want.Amount, _ = strconv.ParseInt(x, 10, 64)
			case "currency":
				want.Currency = x
			case "reason":
				want.Reason = x
			default:
				want.Other[name] = x
			}
		}
		if got := parsePayload(payload); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q reads %+v, ParseQuery %+v", payload, got, want)
		}
		if got := payloadValue(payload, "charge"); got != v.Get("charge") {
			t.Fatalf("%q's charge reads %q, ParseQuery %q", payload, got, v.Get("charge"))
		}
	})
}
