package serve

// PayPal's wire: Payments v2. A client takes an OAuth token
// (POST /v1/oauth2/token), refunds a capture
// (POST /v2/payments/captures/{capture_id}/refund, keyed by
// PayPal-Request-Id) and reads a refund
// (GET /v2/payments/refunds/{refund_id}).

import (
	"net/http"
	"strings"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

type paypalWire struct{}

func (paypalWire) name() string { return WirePayPal }

func (paypalWire) routes(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("/v1/oauth2/token", s.methods(map[string]http.HandlerFunc{http.MethodPost: s.paypalToken}))
	mux.HandleFunc("/v2/payments/captures/{capture}/refund", s.methods(map[string]http.HandlerFunc{http.MethodPost: s.paypalRefund}))
	mux.HandleFunc("/v2/payments/refunds/{id}", s.methods(map[string]http.HandlerFunc{http.MethodGet: s.paypalGet}))
}

func (paypalWire) serves() string {
	return "POST /v1/oauth2/token, POST /v2/payments/captures/{capture_id}/refund and GET /v2/payments/refunds/{refund_id}"
}

func (paypalWire) intentFields() []string { return []string{"custom_id", "invoice_id"} }

// status: PayPal answers a refund it declines 422 (UNPROCESSABLE_ENTITY)
// and a malformed request 400.
func (paypalWire) status(e *refusal) int {
	if e.doc == nil && e.kind == refusedRejected {
		return http.StatusUnprocessableEntity
	}
	return e.status()
}

// created: 201 for a refund made, 200 for the latest state of one an
// earlier request under the same PayPal-Request-Id made.
func (paypalWire) created(replayed bool) int {
	if replayed {
		return http.StatusOK
	}
	return http.StatusCreated
}

// stamp: PayPal's replies carry Paypal-Debug-Id, the id its support
// traces a request by.
func (paypalWire) stamp(h http.Header, _ *http.Request, id string, _ int, _ *refusal) {
	h.Set("Paypal-Debug-Id", id)
}

// paypalError is PayPal's error object.
type paypalError struct {
	Name    string         `json:"name"`
	Message string         `json:"message"`
	DebugID string         `json:"debug_id"`
	Details []paypalDetail `json:"details,omitempty"`
}

type paypalDetail struct {
	Field       string `json:"field,omitempty"`
	Issue       string `json:"issue"`
	Description string `json:"description"`
}

func (paypalWire) errorBody(e *refusal, id string) []byte {
	name, issue := paypalWords(e)
	out := paypalError{Name: name, Message: paypalMessages[name], DebugID: id, Details: []paypalDetail{{Issue: issue, Description: e.why}}}
	if e.param != "" {
		out.Details[0].Field = "/" + strings.ReplaceAll(e.param, ".", "/")
	}
	if out.Message == "" {
		out.Message = e.why
	}
	return marshal(out)
}

// paypalMessages are the messages PayPal gives with each error name.
var paypalMessages = map[string]string{
	"INVALID_REQUEST":        "Request is not well-formed, syntactically incorrect, or violates schema.",
	"AUTHENTICATION_FAILURE": "Authentication failed due to invalid authentication credentials or a missing Authorization header.",
	"RESOURCE_NOT_FOUND":     "The specified resource does not exist.",
	"METHOD_NOT_SUPPORTED":   "The server does not implement the requested HTTP method.",
	"UNPROCESSABLE_ENTITY":   "The requested action could not be performed, semantically incorrect, or failed business validation.",
	"INTERNAL_SERVER_ERROR":  "An internal server error occurred.",
	"SERVICE_UNAVAILABLE":    "Service Unavailable.",
	"RESOURCE_CONFLICT":      "The server has detected a conflict while processing this request.",
}

// paypalWords are PayPal's error name and issue for a refusal.
func paypalWords(e *refusal) (name, issue string) {
	if e.doc != nil {
		switch e.doc.Status {
		case http.StatusConflict:
			return "RESOURCE_CONFLICT", e.doc.Code
		case http.StatusBadRequest:
			return "INVALID_REQUEST", e.doc.Code
		}
		return "UNPROCESSABLE_ENTITY", e.doc.Code
	}
	switch e.kind {
	case refusedUnauthenticated:
		return "AUTHENTICATION_FAILURE", "INVALID_ACCOUNT_STATUS"
	case refusedNotFound, refusedNoRoute:
		return "RESOURCE_NOT_FOUND", "INVALID_RESOURCE_ID"
	case refusedMethod:
		return "METHOD_NOT_SUPPORTED", "HTTP_METHOD_NOT_SUPPORTED"
	case refusedMissing:
		return "INVALID_REQUEST", "MISSING_REQUIRED_PARAMETER"
	case refusedRejected:
		return "UNPROCESSABLE_ENTITY", "REFUND_NOT_ALLOWED"
	case refusedKeyInUse:
		return "RESOURCE_CONFLICT", "PREVIOUS_REQUEST_IN_PROGRESS"
	case refusedOtherParameters:
		return "UNPROCESSABLE_ENTITY", "DUPLICATE_INVOICE_ID"
	case refusedProviderError:
		return "INTERNAL_SERVER_ERROR", "INTERNAL_SERVICE_ERROR"
	case refusedUnavailable:
		return "SERVICE_UNAVAILABLE", "SERVICE_UNAVAILABLE"
	}
	return "INVALID_REQUEST", "INVALID_PARAMETER_VALUE"
}

// paypalToken serves the OAuth 2.0 client-credentials grant: any client
// id is taken, and the token names it, so that a refund's principal is
// the client's.
func (s *Server) paypalToken(w http.ResponseWriter, r *http.Request) {
	user, _, ok := r.BasicAuth()
	if !ok || user == "" {
		s.wire.stamp(w.Header(), r, "req_token", http.StatusUnauthorized, nil)
		reply(w, http.StatusUnauthorized, marshal(map[string]string{"error": "invalid_client", "error_description": "Client Authentication failed: send the client id and secret with basic auth."}))
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		s.wire.stamp(w.Header(), r, "req_token", http.StatusBadRequest, nil)
		reply(w, http.StatusBadRequest, marshal(map[string]string{"error": "unsupported_grant_type", "error_description": "Grant Type is NULL or not client_credentials: send grant_type=client_credentials."}))
		return
	}
	s.wire.stamp(w.Header(), r, "req_token", http.StatusOK, nil)
	reply(w, http.StatusOK, marshal(map[string]any{
		"scope":        "https://uri.paypal.com/services/payments/refund",
		"access_token": paypalTokenPrefix + user,
		"token_type":   "Bearer",
		"app_id":       "APP-REPLAYLAB",
		"expires_in":   32400,
		"nonce":        "replaylab",
	}))
}

// paypalTokenPrefix starts every token serve issues: the rest is the
// client id it was issued to.
const paypalTokenPrefix = "A21AArl."

// paypalPrincipal is the client a bearer token names: one serve issued,
// or any other bearer token as it is.
func paypalPrincipal(r *http.Request) (string, *refusal) {
	t := bearer(r)
	if t == "" {
		return "", refuse(refusedUnauthenticated, "", "Authentication failed: send Authorization: Bearer TOKEN, with a token from POST /v1/oauth2/token.")
	}
	return strings.TrimPrefix(t, paypalTokenPrefix), nil
}

// paypalMoney is PayPal's Money: a decimal string and a currency code.
type paypalMoney struct {
	CurrencyCode *string `json:"currency_code"`
	Value        *string `json:"value"`
}

// paypalRefundRequest is RefundRequest, the fields serve reads.
type paypalRefundRequest struct {
	Amount      *paypalMoney `json:"amount"`
	CustomID    *string      `json:"custom_id"`
	InvoiceID   *string      `json:"invoice_id"`
	NoteToPayer *string      `json:"note_to_payer"`
}

type paypalMoneyJSON struct {
	CurrencyCode string `json:"currency_code"`
	Value        string `json:"value"`
}

type paypalLink struct {
	Href   string `json:"href"`
	Rel    string `json:"rel"`
	Method string `json:"method"`
}

// paypalRefundJSON is PayPal's Refund.
type paypalRefundJSON struct {
	ID            string             `json:"id"`
	Amount        *paypalMoneyJSON   `json:"amount,omitempty"`
	InvoiceID     string             `json:"invoice_id,omitempty"`
	CustomID      string             `json:"custom_id,omitempty"`
	NoteToPayer   string             `json:"note_to_payer,omitempty"`
	Status        string             `json:"status"`
	StatusDetails *paypalStatusWords `json:"status_details,omitempty"`
	CreateTime    string             `json:"create_time,omitempty"`
	UpdateTime    string             `json:"update_time,omitempty"`
	Links         []paypalLink       `json:"links"`
}

type paypalStatusWords struct {
	Reason string `json:"reason"`
}

// paypalID is a refund's id: 17 characters, as PayPal's are.
func paypalID(id ledger.ObjectID) string { return wireID("RL", id, 15) }

func (s *Server) paypalRefund(w http.ResponseWriter, r *http.Request) {
	var in paypalRefundRequest
	minimal := strings.Contains(strings.ToLower(r.Header.Get("Prefer")), "return=minimal")
	s.createJSON(w, r, jsonCreate{
		principal: paypalPrincipal, keyHeader: "PayPal-Request-Id", in: &in, optional: true,
		decode: func() (refundParams, *refusal) { return in.decode(r.PathValue("capture")) },
		render: func(t createTurn, _ refundParams) []byte {
			return marshal(paypalRefundOf(t.obj, t.res.Response.Status, t.created, minimal))
		},
	})
}

// decode checks a refund request as PayPal does; the capture is the
// charge.
func (in paypalRefundRequest) decode(capture string) (refundParams, *refusal) {
	p := refundParams{Charge: capture, Other: map[string]string{}, Metadata: map[string]string{}}
	if capture == "" || len(capture) > 64 {
		return p, invalidParam("capture_id", "The capture id in the path is not one PayPal issues.")
	}
	if in.Amount == nil || in.Amount.Value == nil {
		return p, refuse(refusedMissing, "amount.value", "Give amount (value and currency_code): this provider holds no captures to take a full refund's amount from, e.g. {\"amount\":{\"value\":\"45.00\",\"currency_code\":\"USD\"}}.")
	}
	if in.Amount.CurrencyCode == nil {
		return p, refuse(refusedMissing, "amount.currency_code", "A required field / parameter is missing: amount.currency_code.")
	}
	n, ok := minorUnits(*in.Amount.Value)
	if !ok {
		return p, invalidParam("amount.value", "The amount's value "+quoteShort(*in.Amount.Value)+" is not a decimal of at most two places, such as \"45.00\".")
	}
	if e := checkAmount("amount.value", n); e != nil {
		return p, e
	}
	if e := checkCurrency("amount.currency_code", *in.Amount.CurrencyCode); e != nil {
		return p, e
	}
	p.Amount, p.Currency = n, strings.ToLower(*in.Amount.CurrencyCode)
	for name, v := range map[string]*string{"custom_id": in.CustomID, "invoice_id": in.InvoiceID, "note_to_payer": in.NoteToPayer} {
		if v == nil {
			continue
		}
		if len(*v) > 127 {
			return p, invalidParam(name, "The field "+name+" is longer than the 127 characters PayPal takes.")
		}
		p.Other[name] = strings.TrimSpace(*v)
	}
	return p, nil
}

// paypalRefundOf is a refund as PayPal shows it; minimal is Prefer:
// return=minimal (the id, the status and the links).
func paypalRefundOf(o ledger.Object, st ledger.Status, created int64, minimal bool) paypalRefundJSON {
	p := parsePayload(o.Payload)
	id := paypalID(o.ID)
	out := paypalRefundJSON{
		ID:     id,
		Status: wireStatus(st, [4]string{"COMPLETED", "PENDING", "FAILED", "CANCELLED"}),
		Links: []paypalLink{
			{Href: "/v2/payments/refunds/" + id, Rel: "self", Method: "GET"},
			{Href: "/v2/payments/captures/" + p.Charge, Rel: "up", Method: "GET"},
		},
	}
	switch st {
	case ledger.Pending:
		out.StatusDetails = &paypalStatusWords{Reason: "ECHECK"}
	}
	if minimal {
		return out
	}
	out.Amount = &paypalMoneyJSON{CurrencyCode: strings.ToUpper(p.Currency), Value: decimal(p.Amount)}
	out.CustomID, out.InvoiceID, out.NoteToPayer = p.Other["custom_id"], p.Other["invoice_id"], p.Other["note_to_payer"]
	out.CreateTime = time.Unix(created, 0).UTC().Format(time.RFC3339)
	out.UpdateTime = out.CreateTime
	return out
}

// paypalGet serves a refund's read.
func (s *Server) paypalGet(w http.ResponseWriter, r *http.Request) {
	if _, e := paypalPrincipal(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	raw := r.PathValue("id")
	s.readOne(w, r, parseWireID(raw, "RL", 15), raw, func(o ledger.Object) []byte {
		return marshal(paypalRefundOf(o, o.Status, s.c.created(o), false))
	})
}

// readOne serves a JSON wire's read of one refund: ledgerID is the
// ledger's id of the wire's id raw ("" for none), body renders the
// refund found. The read meets its fault as a Stripe retrieve does.
func (s *Server) readOne(w http.ResponseWriter, r *http.Request, ledgerID, raw string, body func(o ledger.Object) []byte) {
	s.lockFor(traceparent(r.Header.Get("traceparent")))
	i, o, found, world := s.c.retrieveLogged(ledgerID)
	if s.heldRead(w, r, i, world) {
		return
	}
	var e *refusal
	var shown []missions.EvidenceObject
	status := http.StatusOK
	var b []byte
	switch {
	case world.Code != http.StatusOK:
		e = readError()
	case found:
		b, shown = body(o), shownOf(o)
	default:
		e = notFound(raw)
	}
	if e != nil {
		s.answerErrLocked(w, r, i, e)
		return
	}
	s.answerLocked(w, r, i, status, b, nil, shown, 0)
}

// answerErrLocked is answerLocked for a refusal, in the wire's shape.
func (s *Server) answerErrLocked(w http.ResponseWriter, r *http.Request, i int, e *refusal) {
	i, id, err := s.recordAnswer(i, planned{wire: export.WireDelivered, status: e.status(), err: e})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		s.unrecorded(w, r, i+1, err)
		return
	}
	s.replyErr(w, r, id, e)
	s.finish(c, i, export.WireDelivered, e.status(), e, nil)
}
