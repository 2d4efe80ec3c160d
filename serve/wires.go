package serve

// Wires: a provider's HTTP API over the one core. A wire decodes its
// provider's requests into the core's (createRequest, a read by id, a
// list), and renders the core's answers in its provider's shape: a
// refund, an error, the headers every reply carries. The core, the
// faults, the session and the storage are the same under every wire;
// a wire adds routes and words, nothing else.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// The wires serve speaks, by the names --wire takes.
const (
	WireStripe   = "stripe"
	WireAdyen    = "adyen"
	WirePayPal   = "paypal"
	WireSquare   = "square"
	WireCheckout = "checkout"
)

// Wires lists the wires serve speaks.
func Wires() []string { return []string{WireStripe, WireAdyen, WirePayPal, WireSquare, WireCheckout} }

// WireOf is the wire a profile is served on by default: the provider's
// own API where serve speaks it (a built-in adyen, paypal, square or
// checkout), else Stripe's.
func WireOf(p *ledger.Profile) string {
	if p != nil && slices.Contains(Wires(), p.ID) {
		return p.ID
	}
	return WireStripe
}

// CheckWire accepts "" (the profile's own) or a wire serve speaks.
func CheckWire(name string) error {
	if name == "" || slices.Contains(Wires(), name) {
		return nil
	}
	msg := fmt.Sprintf("wire %q: give one of %s, or leave it out to speak the provider profile's own API (Stripe's for a profile serve has no API of)", name, strings.Join(Wires(), ", "))
	if best := termtext.Closest(name, Wires()); best != "" {
		msg += "; did you mean " + best + "?"
	}
	return errors.New(msg)
}

// wire is one provider's API over the core.
type wire interface {
	// name is the wire's name, as --wire takes it.
	name() string
	// routes adds the wire's API to mux.
	routes(s *Server, mux *http.ServeMux)
	// serves says, for a request no route takes, what the wire serves.
	serves() string
	// stamp sets the headers every reply on the wire carries: id is the
	// reply's request id (the session's req_N), status and e its answer.
	stamp(h http.Header, r *http.Request, id string, status int, e *refusal)
	// errorBody is e in the provider's error shape; id as for stamp.
	errorBody(e *refusal, id string) []byte
	// intentFields are the request fields that may link a create to its
	// intent, the first the default.
	intentFields() []string
	// status is the HTTP status e is answered with on the wire, and
	// created the status of a create answered with a refund (replayed:
	// the answer of an earlier request under its key). The session keeps
	// the core's statuses, which every wire shares; these are the
	// wire's words for them.
	status(e *refusal) int
	created(replayed bool) int
}

// newWire is the wire o names.
func newWire(o Options) wire {
	switch o.Wire {
	case WireAdyen:
		return adyenWire{}
	case WirePayPal:
		return paypalWire{}
	case WireSquare:
		return squareWire{}
	case WireCheckout:
		return checkoutWire{}
	}
	return stripeWire{shouldRetry: o.ShouldRetry}
}

// replyErr answers e on s's wire, as reply id.
func (s *Server) replyErr(w http.ResponseWriter, r *http.Request, id string, e *refusal) {
	status := s.wire.status(e)
	s.wire.stamp(w.Header(), r, id, status, e)
	body := s.wire.errorBody(e, id)
	if body == nil {
		// A provider that answers some errors with no body at all.
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(status)
		return
	}
	reply(w, status, body)
}

// validationStatus is the status of a wire that answers a request it
// cannot take with status (Adyen's and Checkout.com's 422), and every
// other refusal as the core does.
func validationStatus(e *refusal, status int) int {
	if e.doc == nil {
		switch e.kind {
		case refusedUnknown, refusedNotWhole, refusedMissing, refusedInvalid, refusedRequest, refusedRejected:
			return status
		}
	}
	return e.status()
}

// createOn plays a decoded create on s's wire: the core's turn, the
// fault's fate on the connection, and the reply. ok renders a refund
// the create was answered with (the turn's status and object); extra,
// when set, adds headers of the wire's to a reply that goes out.
func (s *Server) createOn(w http.ResponseWriter, r *http.Request, req createRequest, ok func(t createTurn) []byte, extra func(h http.Header, t createTurn)) {
	t, seq, err := s.takeCreate(req, true)
	if err != nil {
		s.unrecorded(w, r, seq, err)
		return
	}
	switch t.fate {
	case fateClose:
		s.crashed(t, req.intent)
		closeConn(w)
		return
	case fateHold:
		wire, how := s.hold(r.Context(), nil, nil)
		s.heldEnded(t.c, t.i, how)
		s.finish(t.c, t.i, wire, 0, nil, nil)
		closeConn(w)
		return
	}
	if r.Context().Err() != nil {
		s.finish(t.c, t.i, export.WireGone, 0, nil, nil)
		return
	}
	id := requestID(seq)
	if extra != nil {
		extra(w.Header(), t)
	}
	if t.aerr != nil {
		s.replyErr(w, r, id, t.aerr)
	} else {
		replayed := t.res.Action == ledger.Replayed || t.res.Action == ledger.Completed
		s.wire.stamp(w.Header(), r, id, s.wire.created(replayed), nil)
		reply(w, s.wire.created(replayed), ok(t))
	}
	s.failpoint("after-reply")
	s.finish(t.c, t.i, export.WireDelivered, t.status, t.aerr, t.shown)
}

// jsonCreate is a create on a JSON wire, as its handler describes it to
// createJSON.
type jsonCreate struct {
	// principal reads who asks from the request's credentials.
	principal func(*http.Request) (string, *refusal)
	// keyHeader names the header that carries the key; "" when the key
	// is a body field, which bodyKey then reads from the decoded body.
	keyHeader string
	bodyKey   func() *string
	// in is the body, decoded into; optional takes an empty body as one
	// with no fields (PayPal's and Checkout.com's full refund).
	in       any
	optional bool
	// decode makes the core's parameters of the decoded body.
	decode func() (refundParams, *refusal)
	// render is the body of a create answered with a refund.
	render func(t createTurn, p refundParams) []byte
}

// createJSON plays a JSON wire's create: its credentials, its key, its
// body, its intent (the intent field among its parameters), then the
// turn. Whatever is refused on the way is refused in the wire's shape,
// with what was known of the request by then.
func (s *Server) createJSON(w http.ResponseWriter, r *http.Request, c jsonCreate) {
	principal, e := c.principal(r)
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	var key string
	if c.keyHeader != "" {
		if key, e = headerKey(r, c.keyHeader, s.opts.Profile); e != nil {
			s.refuse(w, r, "", "", e)
			return
		}
	}
	if !c.optional || r.ContentLength != 0 {
		if e := readJSON(w, r, c.in); e != nil {
			s.refuse(w, r, "", key, e)
			return
		}
	}
	if c.keyHeader == "" {
		if k := c.bodyKey(); k != nil {
			field := s.opts.Profile.Key.Body
			if key, e = bodyKey(*k, field, "The field "+field, "field", s.opts.Profile); e != nil {
				s.refuse(w, r, "", "", e)
				return
			}
		}
	}
	params, e := c.decode()
	intent := params.intentIn(s.opts.IntentField)
	if e == nil {
		e = s.intentRefused(intent)
	}
	if e != nil {
		s.refuse(w, r, intent, key, e)
		return
	}
	req := createRequest{principal: principal, key: key, intent: intent, params: params, trace: traceparent(r.Header.Get("traceparent"))}
	s.createOn(w, r, req, func(t createTurn) []byte { return c.render(t, params) }, nil)
}

// readList serves a JSON wire's list: the page lq selects, as the read's
// fault shows the ledger, logged under query (in Stripe's words, which a
// replay reads back) and rendered by body. The read meets its fault as
// a Stripe list does.
func (s *Server) readList(w http.ResponseWriter, r *http.Request, lq listQuery, query string, body func(page []ledger.Object, more bool) []byte) {
	s.lockFor(traceparent(r.Header.Get("traceparent")))
	i, page, more, world, e := s.c.listLogged(lq, query)
	if e != nil {
		s.mu.Unlock()
		s.refuse(w, r, "", "", e)
		return
	}
	if s.heldRead(w, r, i, world) {
		return
	}
	if world.Code != http.StatusOK {
		s.answerErrLocked(w, r, i, readError())
		return
	}
	var shown []missions.EvidenceObject
	for _, o := range page {
		shown = append(shown, shownOf(o)...)
	}
	s.answerLocked(w, r, i, http.StatusOK, body(page, more), nil, shown, 0)
}

// intentIn is the intent a JSON wire's create carries in field: one of
// its wire's fields, kept among the parameters (reason is the refund's
// own).
func (p refundParams) intentIn(field string) string {
	if field == "reason" {
		return p.Reason
	}
	return p.Other[field]
}

// readJSON reads a JSON object body, bounded, into v: what the four
// JSON wires take. A body that is not JSON, or not the object v is, is
// refused in words that say where it went wrong.
func readJSON(w http.ResponseWriter, r *http.Request, v any) *refusal {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return invalidParam("", "The body is "+strconv.Quote(termtext.Shorten(ct, 100))+"; send JSON with Content-Type: application/json.")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return refuse(refusedTooLarge, "", "The request body is over "+strconv.Itoa(MaxBodyBytes>>10)+" KiB, more than a refund's request can be.")
		}
		return refuse(refusedRequest, "", "The body could not be read: "+err.Error()+".")
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return refuse(refusedMissing, "", "The request has no body; send the refund's fields as a JSON object.")
	}
	if !json.Valid(body) {
		return invalidParam("", "The body is not JSON; send the refund's fields as a JSON object.")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalidParam(te.Field, "The field "+strconv.Quote(te.Field)+" is "+jsonKind(te.Value)+"; it takes "+goKindWords(te.Type.String())+".")
		}
		return invalidParam("", "The body is not a JSON object of a refund's fields ("+err.Error()+").")
	}
	return nil
}

// jsonKind is a JSON value's kind in words, as encoding/json names it.
func jsonKind(v string) string {
	switch v {
	case "string", "number", "object", "array", "bool":
		return "a " + v
	}
	return v
}

// goKindWords is a Go type encoding/json reports, as JSON words.
func goKindWords(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "a whole number"
	case t == "string", t == "*string":
		return "a string"
	case strings.HasPrefix(t, "map["):
		return "an object of strings"
	case strings.HasPrefix(t, "bool"):
		return "true or false"
	}
	return "an object"
}

// headerKey is the idempotency key a JSON wire's request carries in the
// header name, checked as keyOf checks Stripe's: one header, not blank,
// UTF-8, at most as long as the profile takes.
func headerKey(r *http.Request, name string, p *ledger.Profile) (string, *refusal) {
	vs := r.Header.Values(name)
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", refuse(refusedInvalid, name, "The request carries "+strconv.Itoa(len(vs))+" "+name+" headers; send one.")
	}
	return bodyKey(vs[0], name, "The "+name+" header", "header", p)
}

// bodyKey checks a key sent as raw, named param (a header or a body
// field), as checkKey does, and to the profile's length.
func bodyKey(raw, param, what, thing string, p *ledger.Profile) (string, *refusal) {
	k, e := checkKey(raw, param, what, thing)
	if e == nil && p != nil && len([]rune(k)) > p.Key.MaxLength {
		return "", refuse(refusedInvalid, param, what+" is "+strconv.Itoa(len([]rune(k)))+" characters long; "+p.ID+" takes keys of at most "+strconv.Itoa(p.Key.MaxLength)+".")
	}
	return k, e
}

// bearer is the token of an Authorization: Bearer header, or "".
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// wireID is a refund's id on a wire: prefix and the ledger's number,
// zero-padded to width.
func wireID(prefix string, id ledger.ObjectID, width int) string {
	n := strconv.FormatInt(int64(id), 10)
	if len(n) < width {
		n = strings.Repeat("0", width-len(n)) + n
	}
	return prefix + n
}

// parseWireID is the ledger's id of a wire id wireID wrote, as the
// ledger writes it, or "" when raw is not one.
func parseWireID(raw, prefix string, width int) string {
	digits, ok := strings.CutPrefix(raw, prefix)
	if !ok || len(digits) != width || strings.Trim(digits, "0123456789") != "" {
		return ""
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 {
		return ""
	}
	return ledger.ObjectID(n).String()
}

// minorUnits reads a decimal amount written as PayPal writes one ("45.00",
// "45", "0.5") as minor units, for a currency of two decimals.
func minorUnits(v string) (int64, bool) {
	whole, frac, dot := strings.Cut(v, ".")
	if whole == "" || strings.Trim(whole, "0123456789") != "" || len(whole) > 12 || dot && (len(frac) == 0 || len(frac) > 2 || strings.Trim(frac, "0123456789") != "") {
		return 0, false
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	return n, err == nil
}

// decimal is minor units written as PayPal writes an amount: "45.00".
func decimal(n int64) string {
	s := strconv.FormatInt(n, 10)
	for len(s) < 3 {
		s = "0" + s
	}
	return s[:len(s)-2] + "." + s[len(s)-2:]
}

// wireStatus is a ledger status in a wire's words: succeeded, pending,
// failed and canceled, in that order.
func wireStatus(st ledger.Status, words [4]string) string {
	switch st {
	case ledger.Succeeded:
		return words[0]
	case ledger.Pending:
		return words[1]
	case ledger.Failed:
		return words[2]
	}
	return words[3]
}

// checkCurrency refuses a currency that is not three letters.
func checkCurrency(param, c string) *refusal {
	if len(c) != 3 || strings.Trim(strings.ToUpper(c), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return invalidParam(param, "The currency "+strconv.Quote(termtext.Shorten(c, 20))+" is not a three-letter ISO 4217 code, such as USD or EUR.")
	}
	return nil
}

// checkAmount refuses an amount that is not a positive whole number of
// minor units.
func checkAmount(param string, n int64) *refusal {
	if n <= 0 || n > 99999999 {
		return invalidParam(param, "The amount "+strconv.FormatInt(n, 10)+" is not one a refund can take: give a positive whole number of minor units, at most 99999999 (4500 is 45.00).")
	}
	return nil
}

// routeWords is the refusal of a request no route of w takes.
func routeWords(r *http.Request, w wire) *refusal {
	return refuse(refusedNoRoute, "", "Unrecognized request URL ("+termtext.Shorten(r.Method, 20)+": "+termtext.Shorten(r.URL.Path, 200)+"). This "+w.name()+" wire serves "+w.serves()+", and the control endpoint under "+ControlPrefix+".")
}

// methods serves a path on a JSON wire by method.
func (s *Server) methods(allow map[string]http.HandlerFunc) http.HandlerFunc {
	names := make([]string, 0, len(allow))
	for m := range allow {
		names = append(names, m)
	}
	slices.Sort(names)
	words := strings.Join(names, ", ")
	return func(w http.ResponseWriter, r *http.Request) {
		defer s.busy()()
		if h, ok := allow[r.Method]; ok {
			h(w, r)
			return
		}
		w.Header().Set("Allow", words)
		s.refuse(w, r, "", "", refuse(refusedMethod, "", "Unrecognized request: "+termtext.Shorten(r.Method, 20)+" "+termtext.Shorten(r.URL.Path, 200)+" (this path takes "+words+")."))
	}
}

// quoteShort is v quoted for a message, cut to its first characters.
func quoteShort(v string) string { return strconv.Quote(termtext.Shorten(v, 40)) }

// shortOf is v cut to its first characters, for a field named in an
// answer.
func shortOf(v string) string { return termtext.Shorten(v, 60) }
