package serve

// A list's query, as each wire decodes it: REST's form (parseList), and
// the list_refunds tool's typed arguments (listArgs.decode). The core
// takes the listQuery alone; the session keeps the query as a form.

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
)

// listQuery is a list request's filters.
type listQuery struct {
	charge, paymentIntent, intent string
	limit                         int
	after, before                 string
	// created bounds the refunds' created times (Unix seconds), from
	// created[gt|gte|lt|lte] or created=T: the list keeps those with
	// from <= created <= to.
	from, to int64
}

// parseList reads a list request's query; intentField is the field that
// may filter by intent, when it is a metadata field.
func parseList(q url.Values, intentField string) (listQuery, *refusal) {
	lq := listQuery{limit: 10, from: math.MinInt64, to: math.MaxInt64}
	for name, vs := range q {
		if e := checkUTF8(name, vs); e != nil {
			return lq, e
		}
		if isExpand(name) {
			return lq, refuseExpand(name, vs)
		}
		if len(vs) != 1 {
			return lq, invalidParam(termtext.Shorten(name, 200), "Send "+termtext.Shorten(name, 200)+" once.")
		}
		v := vs[0]
		if e := checkString(name, v); e != nil {
			return lq, e
		}
		if name == "created" || strings.HasPrefix(name, "created[") {
			if e := lq.created(name, v); e != nil {
				return lq, e
			}
			continue
		}
		switch {
		case name == "charge":
			lq.charge = v
		case name == "payment_intent":
			lq.paymentIntent = v
		case name == "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100 {
				return lq, refuse(refusedNotWhole, "limit", "Invalid limit "+strconv.Quote(v)+": give a whole number from 1 to 100.")
			}
			lq.limit = n
		case name == "starting_after":
			lq.after = v
		case name == "ending_before":
			lq.before = v
		case name == intentField && strings.HasPrefix(name, "metadata["):
			lq.intent = v
		default:
			return lq, refuse(refusedUnknown, termtext.Shorten(name, 200), "Received unknown parameter: "+termtext.Shorten(name, 200)+". Listing refunds takes charge, payment_intent, created (or created[gt], [gte], [lt], [lte]), "+intentField+", limit, starting_after and ending_before.")
		}
	}
	switch {
	case lq.after != "" && lq.before != "":
		return lq, invalidParam("starting_after", "Give starting_after or ending_before, not both.")
	case lq.charge != "" && lq.paymentIntent != "":
		return lq, invalidParam("payment_intent", "Give charge or payment_intent to filter by, not both.")
	}
	return lq, nil
}

// created reads one created filter: created=T, or created[gt|gte|lt|lte]=T,
// with T a Unix time in seconds.
func (lq *listQuery) created(name, v string) *refusal {
	short := termtext.Shorten(name, 40)
	if !slices.Contains([]string{"created", "created[gt]", "created[gte]", "created[lt]", "created[lte]"}, name) {
		return refuse(refusedUnknown, termtext.Shorten(name, 200), "Received unknown parameter: "+termtext.Shorten(name, 200)+". created takes gt, gte, lt and lte, as in created[gte]=1767225600, or a time alone.")
	}
	t, err := strconv.ParseInt(v, 10, 64)
	if err != nil || t < 0 || strings.Trim(v, "0123456789") != "" {
		return refuse(refusedNotWhole, name, "Invalid integer: "+strconv.Quote(termtext.Shorten(v, 200))+". "+short+" takes a Unix time in seconds, e.g. "+short+"=1767225600.")
	}
	switch name {
	case "created":
		lq.from, lq.to = max(lq.from, t), min(lq.to, t)
	case "created[gt]":
		if t == math.MaxInt64 {
			lq.from, lq.to = math.MaxInt64, math.MinInt64 // after the last time: none
		} else {
			lq.from = max(lq.from, t+1)
		}
	case "created[gte]":
		lq.from = max(lq.from, t)
	case "created[lt]":
		lq.to = min(lq.to, t-1)
	case "created[lte]":
		lq.to = min(lq.to, t)
	}
	return nil
}

// decode reads list_refunds' typed arguments as parseList reads the same
// list sent as a form, with the intent in intentField (a metadata field,
// else DefaultIntentField); it returns the query and the form the session
// keeps of it.
func (a listArgs) decode(intentField string) (listQuery, string, *refusal) {
	field := intentField
	if _, ok := metadataField(field); !ok {
		field = DefaultIntentField
	}
	lq := listQuery{limit: 10, from: math.MinInt64, to: math.MaxInt64, charge: a.Charge, paymentIntent: a.PaymentIntent, intent: a.Intent}
	kept := url.Values{}
	for _, p := range []struct{ name, value string }{{"charge", a.Charge}, {field, a.Intent}, {"payment_intent", a.PaymentIntent}} {
		if p.value == "" {
			continue
		}
		if e := checkString(p.name, p.value); e != nil {
			return lq, "", e
		}
		kept.Set(p.name, p.value)
	}
	if a.Limit != 0 {
		v := strconv.Itoa(a.Limit)
		if a.Limit < 1 || a.Limit > 100 {
			return lq, "", refuse(refusedNotWhole, "limit", "Invalid limit "+strconv.Quote(v)+": give a whole number from 1 to 100.")
		}
		lq.limit = a.Limit
		kept.Set("limit", v)
	}
	if lq.charge != "" && lq.paymentIntent != "" {
		return lq, "", invalidParam("payment_intent", "Give charge or payment_intent to filter by, not both.")
	}
	return lq, kept.Encode(), nil
}
