package serve

import (
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// asForm is a create's arguments as the REST API's form: the reference a
// tool call's typed decoding is held to.
func asForm(a createArgs, intentField string) url.Values {
	f := url.Values{}
	set := func(k, v string) {
		if v != "" {
			f.Set(k, v)
		}
	}
	set("charge", a.Charge)
	set("payment_intent", a.PaymentIntent)
	if a.Amount != nil {
		f.Set("amount", strconv.FormatInt(*a.Amount, 10))
	}
	set("currency", a.Currency)
	set("reason", a.Reason)
	if _, ok := metadataField(intentField); ok {
		set(intentField, a.Intent)
	} else {
		set(DefaultIntentField, a.Intent)
	}
	return f
}

// A tool call's arguments decode as the same create sent as a form does:
// the same parameters, intent and first refusal, for any arguments.
func TestToolArgumentsDecodeAsTheForm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		word := rapid.SampledFrom([]string{"", " ", "ch_1", "pi_1", "usd", "USD", "us", "duplicate", "nope", "refund-1", " refund-2 ", "x[y]", string(make([]byte, 0)), "a\u00e9b"})
		a := createArgs{
			Intent: word.Draw(t, "intent"), Charge: word.Draw(t, "charge"), PaymentIntent: word.Draw(t, "pi"),
			Currency: word.Draw(t, "currency"), Reason: word.Draw(t, "reason"),
		}
		if rapid.Bool().Draw(t, "amount?") {
			n := rapid.Int64Range(-5, MaxAmount+5).Draw(t, "amount")
			a.Amount = &n
		}
		field := rapid.SampledFrom([]string{DefaultIntentField, "metadata[order]", "charge", "payment_intent"}).Draw(t, "field")
		form := asForm(a, field)
		wantP, wantE := decodeRefund(form)
		wantIntent := intentOf(form, field)
		gotP, gotIntent, gotE := a.decode(field)
		if !reflect.DeepEqual(gotE, wantE) {
			t.Fatalf("refusal %+v, the form's %+v", gotE, wantE)
		}
		if wantE == nil && !reflect.DeepEqual(gotP, wantP) {
			t.Fatalf("params %+v, the form's %+v", gotP, wantP)
		}
		if gotIntent != wantIntent {
			t.Fatalf("intent %q, the form's %q", gotIntent, wantIntent)
		}
	})
}

// list_refunds' arguments decode as the same list sent as a form does:
// the same query and the same form kept, or a refusal where the form has
// one.
func TestListArgumentsDecodeAsTheForm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		word := rapid.SampledFrom([]string{"", "ch_1", "pi_1", "refund-1", " refund-2 ", strings.Repeat("x", MaxString+1)})
		a := listArgs{Intent: word.Draw(t, "intent"), Charge: word.Draw(t, "charge"), PaymentIntent: word.Draw(t, "pi"), Limit: rapid.IntRange(-2, 102).Draw(t, "limit")}
		field := rapid.SampledFrom([]string{DefaultIntentField, "metadata[order]", "charge"}).Draw(t, "field")
		formField := field
		if _, ok := metadataField(formField); !ok {
			formField = DefaultIntentField
		}
		q := url.Values{}
		for k, v := range map[string]string{"charge": a.Charge, "payment_intent": a.PaymentIntent, formField: a.Intent} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if a.Limit != 0 {
			q.Set("limit", strconv.Itoa(a.Limit))
		}
		want, wantE := parseList(q, formField)
		got, kept, gotE := a.decode(field)
		if (gotE == nil) != (wantE == nil) {
			t.Fatalf("refusal %v, the form's %v", gotE, wantE)
		}
		if wantE == nil && (got != want || kept != q.Encode()) {
			t.Fatalf("query %+v kept %q, the form's %+v %q", got, kept, want, q.Encode())
		}
	})
}
