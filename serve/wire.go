package serve

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/replaylab/replaylab/internal/termtext"
)

// StripeVersion is the API version serve answers in when a request names
// none: the version stripe-node 23.1.0 pins. A request that sends
// Stripe-Version (as stripe-node and stripe-go do, each with its own pin)
// gets its own version back, as Stripe's replies carry the version they
// were rendered in.
const StripeVersion = "2026-10-28.endive"

// What Stripe-Should-Retry says (Options.ShouldRetry).
const (
	// ShouldRetryAuto sends what Stripe sends for each reply.
	ShouldRetryAuto = "auto"
	// ShouldRetryOmit sends no Stripe-Should-Retry header at all, as an
	// older or other provider would.
	ShouldRetryOmit = "omit"
)

// ShouldRetryModes lists the values Options.ShouldRetry accepts.
func ShouldRetryModes() []string { return []string{ShouldRetryAuto, "true", "false", ShouldRetryOmit} }

// shouldRetry is the Stripe-Should-Retry header for a reply of status
// with error e under mode, or "" for none. Stripe sends it when it knows
// more than the status says, and in auto serve sends what Stripe does:
//   - a success to a POST: false (a retry would have no further effect);
//   - a 409 idempotency_key_in_use (another request with the key is still
//     executing): true; a retry with the same key is answered once the
//     first finishes;
//   - a 500 saved under the key: false; a retry with the key replays the
//     same saved 500 (contract v1), and one with a new key may refund twice;
//   - a 400 idempotency_error (the key came with other parameters): false;
//   - a 503 the provider could not record: true; nothing was executed;
//   - any other reply (a read, a 400 for a malformed request, 401, 404,
//     405, 413): none; the status says it all.
//
// stripe-node decides on the header first: false stops a retry of a 409
// or a 5xx it would otherwise make, and true makes it retry any reply, a
// success or a 400 included. stripe-go reads it only for replies that are
// not errors; it retries an error only for a 429 lock_timeout.
func shouldRetry(mode, method string, status int, e *refusal) string {
	switch mode {
	case ShouldRetryOmit:
		return ""
	case "true", "false":
		return mode
	}
	switch {
	case e == nil && status < 400:
		if method == http.MethodPost {
			return "false"
		}
		return ""
	case status == http.StatusConflict, status == http.StatusServiceUnavailable:
		return "true"
	case status >= 500, e != nil && (e.kind == refusedKeyInUse || e.kind == refusedOtherParameters):
		return "false"
	}
	return ""
}

// unrecordedIDs numbers the replies to requests the session does not hold
// (a durable write failed before the request was logged).
var unrecordedIDs atomic.Int64

// requestID is the Request-Id of session request seq: Stripe's req_
// prefix and the request's number, so that a Request-Id names the
// session's record of the request.
func requestID(seq int) string {
	if seq <= 0 {
		return "req_unrecorded_" + strconv.FormatInt(unrecordedIDs.Add(1), 10)
	}
	return "req_" + strconv.Itoa(seq)
}

// stamp sets the headers every API reply carries: its Request-Id, the
// Stripe-Version it answers in, and Stripe-Should-Retry for status and e.
func (s *Server) stamp(w http.ResponseWriter, r *http.Request, seq, status int, e *refusal) {
	s.stampID(w, r, requestID(seq), status, e)
}

// againID is the Request-Id of the again-th request counted on request
// seq (SessionRequest.Again): req_7_2 is the second request alike
// request 7 after it.
func againID(seq, again int) string {
	if again == 0 {
		return requestID(seq)
	}
	return requestID(seq) + "_" + strconv.Itoa(again)
}

// stampID is stamp with the Request-Id given.
func (s *Server) stampID(w http.ResponseWriter, r *http.Request, id string, status int, e *refusal) {
	s.wire.stamp(w.Header(), r, id, status, e)
}

// stripeWire is Stripe's v1 refunds API: the wire serve spoke first.
type stripeWire struct{ shouldRetry string }

func (stripeWire) name() string { return WireStripe }

func (stripeWire) routes(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("/v1/refunds", s.getPost(s.list, s.create))
	mux.HandleFunc("/v1/refunds/{id}", s.getPost(s.retrieve, s.update))
	mux.HandleFunc("/v1/refunds/{id}/cancel", s.cancel)
}

func (stripeWire) serves() string {
	return "POST /v1/refunds, GET /v1/refunds, GET and POST /v1/refunds/{id}, POST /v1/refunds/{id}/cancel"
}

func (stripeWire) intentFields() []string { return []string{DefaultIntentField} }

func (stripeWire) errorBody(e *refusal, _ string) []byte { return e.body() }

func (stripeWire) status(e *refusal) int { return e.status() }

func (stripeWire) created(bool) int { return http.StatusOK }

// stamp sets the headers every Stripe reply carries: its Request-Id, the
// Stripe-Version it answers in, and Stripe-Should-Retry for status and e.
func (sw stripeWire) stamp(h http.Header, r *http.Request, id string, status int, e *refusal) {
	h.Set("Request-Id", id)
	if v := versionOf(r); v == StripeVersion {
		h["Stripe-Version"] = stripeVersion
	} else {
		h.Set("Stripe-Version", v)
	}
	if v := shouldRetry(sw.shouldRetry, r.Method, status, e); v != "" {
		h.Set("Stripe-Should-Retry", v)
	}
}

// stripeVersion is the Stripe-Version header of a reply in
// StripeVersion, one slice for every reply.
var stripeVersion = []string{StripeVersion}

// versionOf is the API version a request asks for, or StripeVersion: a
// version is a date and an optional release name, as in
// 2025-09-30.clover; anything else is answered in StripeVersion.
func versionOf(r *http.Request) string {
	v := r.Header.Get("Stripe-Version")
	if v == "" || len(v) > 64 || strings.Trim(v, "abcdefghijklmnopqrstuvwxyz0123456789-._") != "" {
		return StripeVersion
	}
	return v
}

// readQuery parses a request's query string, refusing one that does not
// parse, which Go's own reading of it would drop quietly.
func readQuery(r *http.Request) (url.Values, *refusal) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, refuse(refusedInvalid, "", "The query string "+strconv.Quote(termtext.Shorten(r.URL.RawQuery, 200))+" does not parse ("+err.Error()+"); percent-encode each name and value, as in ?limit=3&charge=ch_1042.")
	}
	return q, nil
}
