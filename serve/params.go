package serve

import (
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/replaylab/replaylab/internal/termtext"
)

// MaxBodyBytes bounds a request body: the largest form Stripe's limits
// allow (50 metadata fields of 500 characters, each character up to 4
// bytes of UTF-8 and 3 of percent-encoding for each byte, and strings of
// 5000 characters) fits; a form much larger is not a refund.
const MaxBodyBytes = 512 << 10

// MaxHeaderBytes bounds a request's line and headers, as serve's HTTP
// server takes them: a refund's id, a list's query and the headers fit
// in far less, and a longer request line is answered 431.
const MaxHeaderBytes = 64 << 10

// MaxKeyLength is the longest idempotency key accepted, as Stripe documents.
const MaxKeyLength = 255

// Stripe's limits on what a refund may carry, answered with its 400s: at
// most 50 metadata fields, keys of at most 40 characters, values of at
// most 500, and other strings of at most 5000; an amount is at most
// MaxAmount of the currency's smallest unit.
const (
	MaxAmount        = 99999999
	MaxMetadata      = 50
	MaxMetadataKey   = 40
	MaxMetadataValue = 500
	MaxString        = 5000
)

// refundParams are the parameters of POST /v1/refunds that the stub reads.
type refundParams struct {
	Charge        string
	PaymentIntent string
	Amount        int64
	Currency      string
	Reason        string
	// Other holds the remaining documented parameters, as sent.
	Other map[string]string
	// Metadata holds the metadata[...] fields.
	Metadata map[string]string
}

// createParams lists the parameters POST /v1/refunds documents. The ones
// the stub does not act on are kept and bound into the digest all the same.
var createParams = map[string]bool{
	"amount": true, "charge": true, "currency": true, "customer": true,
	"instructions_email": true, "origin": true, "payment_intent": true,
	"reason": true, "refund_application_fee": true, "reverse_transfer": true,
}

var reasons = []string{"duplicate", "fraudulent", "requested_by_customer"}

// decodeRefund reads the form of a refund create. It refuses what Stripe
// refuses before execution (an unknown or malformed parameter, a missing
// charge), so a refused request saves nothing under its key.
func decodeRefund(form url.Values) (refundParams, *refusal) {
	p := refundParams{Other: map[string]string{}, Metadata: map[string]string{}}
	names := make([]string, 0, len(form))
	for name := range form {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		values := form[name]
		if e := checkUTF8(name, values); e != nil {
			return p, e
		}
		if field, ok := metadataField(name); ok {
			if e := p.takeMetadata(name, field, values); e != nil {
				return p, e
			}
			continue
		}
		if name == "metadata" {
			if len(values) != 1 || values[0] != "" {
				return p, invalidParam(name, "Send metadata= (empty) for no metadata, or metadata[NAME]=VALUE for a field.")
			}
			continue
		}
		if isExpand(name) {
			return p, refuseExpand(name, values)
		}
		if !createParams[name] {
			return p, refuse(refusedUnknown, name, "Received unknown parameter: "+name+". A refund takes amount, charge or payment_intent, currency, metadata[...], reason and the other documented refund parameters.")
		}
		if len(values) != 1 {
			return p, invalidParam(name, "Send "+name+" once.")
		}
		if e := p.take(name, values[0]); e != nil {
			return p, e
		}
	}
	return p, p.whole()
}

// take reads one documented parameter of a create, as sent once.
func (p *refundParams) take(name, v string) *refusal {
	if e := checkString(name, v); e != nil {
		return e
	}
	switch name {
	case "charge":
		p.Charge = v
	case "payment_intent":
		p.PaymentIntent = v
	case "amount":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > MaxAmount || strings.Trim(v, "0123456789") != "" {
			return refuse(refusedNotWhole, "amount", "Invalid amount "+strconv.Quote(v)+": give a whole number of the currency's smallest unit from 1 to 99999999, e.g. 4500 for 45.00.")
		}
		p.Amount = n
	case "currency":
		if len(v) != 3 || strings.ToLower(v) != v || strings.Trim(v, "abcdefghijklmnopqrstuvwxyz") != "" {
			return invalidParam("currency", "Invalid currency "+strconv.Quote(v)+": give a three-letter ISO code in lowercase, e.g. usd.")
		}
		p.Currency = v
	case "reason":
		if !slices.Contains(reasons, v) {
			return invalidParam("reason", "Invalid reason "+strconv.Quote(v)+": accepted are duplicate, fraudulent and requested_by_customer.")
		}
		p.Reason = v
	default:
		p.Other[name] = v
	}
	return nil
}

// takeMetadata reads one metadata field, as sent once: an empty value
// unsets it, as at Stripe.
func (p *refundParams) takeMetadata(name, field string, values []string) *refusal {
	if e := checkMetadata(name, field, values); e != nil {
		return e
	}
	if values[0] != "" {
		p.Metadata[field] = values[0]
	}
	return nil
}

// whole refuses a create that lacks what every refund needs, or gives
// what no refund takes together, once every parameter is read.
func (p refundParams) whole() *refusal {
	switch {
	case p.Charge != "" && p.PaymentIntent != "":
		return invalidParam("payment_intent", "You passed both charge and payment_intent; a refund refunds one of them. Send charge or payment_intent, not both.")
	case p.Charge == "" && p.PaymentIntent == "":
		return refuse(refusedMissing, "charge", "Missing charge: give the charge or the payment_intent to refund.")
	case p.Amount == 0:
		return refuse(refusedMissing, "amount", "Missing amount: this stub holds no charges to take a full refund's amount from, so give amount, e.g. amount=4500.")
	}
	if len(p.Metadata) > MaxMetadata {
		return invalidParam("metadata", "Metadata can have up to 50 keys, but you've set "+strconv.Itoa(len(p.Metadata))+".")
	}
	return nil
}

// checkMetadata refuses a metadata field over Stripe's limits: a key of 1
// to 40 characters without brackets, sent once, with a value of at most
// 500 characters.
func checkMetadata(name, field string, values []string) *refusal {
	switch n := utf8.RuneCountInString(field); {
	case n == 0 || strings.ContainsAny(field, "[]"):
		return invalidParam("metadata", "Invalid key: "+strconv.Quote(termtext.Shorten(field, 60))+": metadata keys are 1 to 40 characters, without brackets, as in metadata[intent].")
	case n > MaxMetadataKey:
		return invalidParam("metadata", "Invalid key: "+strconv.Quote(termtext.Shorten(field, 60))+" must be a string of at most 40 characters; it has "+strconv.Itoa(n)+".")
	case len(values) != 1:
		return invalidParam(termtext.Shorten(name, 60), "Send each metadata field once.")
	}
	if n := utf8.RuneCountInString(values[0]); n > MaxMetadataValue {
		return invalidParam("metadata", "Invalid val: "+strconv.Quote(termtext.Shorten(values[0], 60))+" (metadata["+termtext.Shorten(field, 40)+"]) must be a string of at most 500 characters; it has "+strconv.Itoa(n)+".")
	}
	return nil
}

// checkString refuses a string parameter over Stripe's 5000 characters.
func checkString(name, v string) *refusal {
	if n := utf8.RuneCountInString(v); n > MaxString {
		return invalidParam(termtext.Shorten(name, 60), "Invalid string: "+strconv.Quote(termtext.Shorten(v, 40))+" ("+termtext.Shorten(name, 60)+"): must be at most 5000 characters; it has "+strconv.Itoa(n)+".")
	}
	return nil
}

// isExpand reports whether name is the expand parameter, in any of the
// forms encoders write it.
func isExpand(name string) bool {
	return name == "expand[]" || name == "expand" || isIndexed(name, "expand")
}

// refuseExpand answers a request that asks to expand a field. The
// refund's expandable fields (charge, payment_intent, balance_transaction
// and the transfer reversals) name objects this provider does not hold,
// so it cannot expand them; it says so rather than answer in another
// shape than the client asked for.
func refuseExpand(name string, values []string) *refusal {
	what := termtext.Shorten(strings.Join(values, ", "), 200)
	return refuse(refusedInvalid, termtext.Shorten(name, 200), "This property cannot be expanded ("+what+"): replaylab serve holds refunds only, not the charges, payment intents, balance transactions or transfers a refund's fields name. Leave out expand.")
}

// checkUTF8 refuses a parameter whose name or value is not UTF-8: two
// different byte strings would read as one intent or key once written.
func checkUTF8(name string, values []string) *refusal {
	if !utf8.ValidString(name) {
		return invalidParam(strings.ToValidUTF8(name, "?"), "A parameter name is not UTF-8 text; send UTF-8.")
	}
	for _, v := range values {
		if !utf8.ValidString(v) {
			return invalidParam(name, "The value of "+name+" is not UTF-8 text; send UTF-8.")
		}
	}
	return nil
}

// isIndexed reports whether name is base[N], as form encoders write the
// Nth element of a list.
func isIndexed(name, base string) bool {
	if !strings.HasPrefix(name, base+"[") || !strings.HasSuffix(name, "]") {
		return false
	}
	n := name[len(base)+1 : len(name)-1]
	return n != "" && strings.Trim(n, "0123456789") == ""
}

// metadataField reads "metadata[name]" as name.
func metadataField(param string) (string, bool) {
	if !strings.HasPrefix(param, "metadata[") || !strings.HasSuffix(param, "]") {
		return "", false
	}
	return param[len("metadata[") : len(param)-1], true
}

// digested is what the payload digest binds. Stripe compares every
// parameter of a repeated request, metadata included, so by default a key
// reused with other metadata (another intent) is refused as a mismatch.
// Without metadata (--compare-metadata=false) only the parameters that
// change what the refund does are bound, and a key reused for another
// intent with the same amount is a replay: told to the wrong intent, a
// phantom, as the lab's payload-hash keys show.
func (p refundParams) digested(metadata bool) map[string]string {
	m := p.bound()
	if metadata {
		for k, v := range p.Metadata {
			m["metadata["+k+"]"] = v
		}
	}
	return m
}

// bound is every parameter that changes what the refund does: all but
// metadata.
func (p refundParams) bound() map[string]string {
	m := make(map[string]string, 5+len(p.Other))
	for k, v := range p.Other {
		m[k] = v
	}
	m["amount"] = strconv.FormatInt(p.Amount, 10)
	if p.Charge != "" {
		m["charge"] = p.Charge
	}
	if p.PaymentIntent != "" {
		m["payment_intent"] = p.PaymentIntent
	}
	if p.Currency != "" {
		m["currency"] = p.Currency
	}
	if p.Reason != "" {
		m["reason"] = p.Reason
	}
	return m
}

// encodeForm is a refund's parameters, m (refundParams.digested(true)),
// as a form, sorted by name: the payload the ledger keeps, from which every reply about the refund is
// made again. Only the bytes that would break a query are escaped
// (space and control bytes, %, &, +, ;, =, #): every other character, in
// any script, is kept as its UTF-8, so that a refund keeps its parameters
// in the bytes they take and not in three times as many. url.ParseQuery
// reads it, and reads the fully escaped payloads of sessions written
// before.
func encodeForm(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	// Room for the exact length first: a refund keeps these bytes as long
	// as it stands, and a builder left to grow keeps up to twice as many.
	n := 0
	for _, k := range keys {
		n += escapedLen(k) + 1 + escapedLen(m[k]) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		queryEscape(&b, k)
		b.WriteByte('=')
		queryEscape(&b, m[k])
	}
	return b.String()
}

// encodeEscapedForm is the payload as serve wrote it before encodeForm kept
// characters as they are: every byte but letters, digits and -_.~
// escaped (url.Values.Encode). A session or a database recorded then
// keeps that form (SessionSettings.PayloadUTF8 false), so that it
// replays to the same bytes.
func encodeEscapedForm(m map[string]string) string {
	v := make(url.Values, len(m))
	for k, x := range m {
		v[k] = []string{x}
	}
	return v.Encode()
}

// escapes reports whether a query component escapes byte c.
func escapes(c byte) bool {
	return c <= ' ' || c == 0x7f || strings.IndexByte("%&+;=#", c) >= 0
}

// escapedLen is the length queryEscape writes s in.
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if escapes(s[i]) {
			n += 2
		}
	}
	return n
}

// queryEscape writes s with the bytes a query component cannot hold as
// they are percent-escaped, and the rest as they are.
func queryEscape(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		if c := s[i]; escapes(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
}

// parsePayload reads a payload written by encode (or, before it, by
// url.Values.Encode), as url.ParseQuery would read it, without the
// url.Values: a pair that does not read (a bad escape, a semicolon) is
// left out, and the first of a name given twice is kept.
func parsePayload(s string) refundParams {
	p := refundParams{Other: map[string]string{}, Metadata: map[string]string{}}
	var seen map[string]bool
	for s != "" {
		var pair string
		pair, s, _ = strings.Cut(s, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err1 := unescapeQuery(rawName)
		x, err2 := unescapeQuery(rawValue)
		if err1 != nil || err2 != nil {
			continue
		}
		if seen[name] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[name] = true
		if field, ok := metadataField(name); ok {
			p.Metadata[field] = x
			continue
		}
		switch name {
		case "charge":
			p.Charge = x
		case "payment_intent":
			p.PaymentIntent = x
		case "amount":
			p.Amount, _ = strconv.ParseInt(x, 10, 64)
		case "currency":
			p.Currency = x
		case "reason":
			p.Reason = x
		default:
			p.Other[name] = x
		}
	}
	return p
}

// payloadValue is the value of name in a payload, as parsePayload reads
// it, without reading the rest: what a list's index needs of each refund.
func payloadValue(s, name string) string {
	for s != "" {
		var pair string
		pair, s, _ = strings.Cut(s, "&")
		rawName, rawValue, _ := strings.Cut(pair, "=")
		if strings.Contains(pair, ";") {
			continue
		}
		if rawName != name {
			if n, err := unescapeQuery(rawName); err != nil || n != name {
				continue
			}
		}
		x, err := unescapeQuery(rawValue)
		if err != nil {
			continue
		}
		return x
	}
	return ""
}

// unescapeQuery is url.QueryUnescape, with no copy made of a component
// that holds nothing to unescape.
func unescapeQuery(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, nil
	}
	return url.QueryUnescape(s)
}

// intentOf is the value of the intent field in form, for a field named as
// a form parameter ("metadata[intent]", "charge"). It is a copy: a value
// parsed from a form can be a piece of the whole body's text, which the
// session would keep whole for as long as it keeps the intent.
func intentOf(form url.Values, field string) string {
	return strings.Clone(strings.TrimSpace(form.Get(field)))
}

// decodeUpdate reads the form of a refund update: metadata[k]=v sets a
// field, metadata[k]= clears it, and metadata= clears them all (the
// field "" in the map it returns). Stripe's update takes metadata alone.
func decodeUpdate(form url.Values) (map[string]string, *refusal) {
	changes := map[string]string{}
	for name, values := range form {
		if e := checkUTF8(name, values); e != nil {
			return nil, e
		}
		if name == "metadata" {
			if len(values) != 1 || values[0] != "" {
				return nil, invalidParam(name, "Send metadata= (empty) to clear every field, or metadata[NAME]=VALUE to set one.")
			}
			changes[""] = ""
			continue
		}
		if field, ok := metadataField(name); ok {
			if e := checkMetadata(name, field, values); e != nil {
				return nil, e
			}
			changes[field] = values[0]
			continue
		}
		if isExpand(name) {
			return nil, refuseExpand(name, values)
		}
		return nil, refuse(refusedUnknown, termtext.Shorten(name, 200), "Received unknown parameter: "+termtext.Shorten(name, 200)+". Updating a refund takes metadata[...] alone.")
	}
	set := 0
	for k, v := range changes {
		if k != "" && v != "" {
			set++
		}
	}
	if set > MaxMetadata {
		return nil, invalidParam("metadata", "Metadata can have up to 50 keys, but you've set "+strconv.Itoa(set)+".")
	}
	return changes, nil
}

// updatePayload is how the session records an update: the refund's id,
// path-escaped, then the changes as a form (metadata= when every field is
// cleared).
func updatePayload(id string, changes map[string]string) string {
	v := url.Values{}
	for k, x := range changes {
		if k == "" {
			v.Set("metadata", "")
			continue
		}
		v.Set("metadata["+k+"]", x)
	}
	return url.PathEscape(id) + "?" + v.Encode()
}

// parseUpdatePayload reads what updatePayload wrote.
func parseUpdatePayload(s string) (string, map[string]string, error) {
	escaped, query, _ := strings.Cut(s, "?")
	id, err := url.PathUnescape(escaped)
	if err != nil {
		return "", nil, err
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return "", nil, err
	}
	changes, e := decodeUpdate(v)
	if e != nil {
		return "", nil, e
	}
	return id, changes, nil
}
