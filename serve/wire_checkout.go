package serve

// Checkout.com's wire: POST /payments/{id}/refunds, keyed by
// Cko-Idempotency-Key and answered 202 with the refund's action id, and
// GET /payments/{id}/actions, the payment's refund actions.

import (
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/replaylab/replaylab/ledger"
)

type checkoutWire struct{}

func (checkoutWire) name() string { return WireCheckout }

func (checkoutWire) routes(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("/payments/{id}/refunds", s.methods(map[string]http.HandlerFunc{http.MethodPost: s.checkoutRefund}))
	mux.HandleFunc("/payments/{id}/actions", s.methods(map[string]http.HandlerFunc{http.MethodGet: s.checkoutActions}))
}

func (checkoutWire) serves() string {
	return "POST /payments/{id}/refunds and GET /payments/{id}/actions"
}

func (checkoutWire) intentFields() []string { return []string{"reference"} }

// status: Checkout.com answers a request it cannot take 422.
func (checkoutWire) status(e *refusal) int {
	return validationStatus(e, http.StatusUnprocessableEntity)
}

func (checkoutWire) created(bool) int { return http.StatusAccepted }

func (checkoutWire) stamp(h http.Header, _ *http.Request, id string, _ int, _ *refusal) {
	h.Set("Cko-Request-Id", id)
	h.Set("Cko-Version", "1.0.0")
}

// checkoutError is Checkout.com's error body: a 401 and a 404 come
// without one (nil).
func (checkoutWire) errorBody(e *refusal, id string) []byte {
	typ, codes := checkoutWords(e)
	if typ == "" {
		return nil
	}
	return marshal(struct {
		RequestID  string   `json:"request_id"`
		ErrorType  string   `json:"error_type"`
		ErrorCodes []string `json:"error_codes,omitempty"`
		// Message is serve's own words, beside Checkout.com's codes.
		Message string `json:"message,omitempty"`
	}{id, typ, codes, e.why})
}

// checkoutWords are Checkout.com's error_type and error_codes for a
// refusal; "" for a refusal answered with no body.
func checkoutWords(e *refusal) (typ string, codes []string) {
	if e.doc != nil {
		if e.doc.Status == http.StatusConflict {
			return e.doc.Code, nil
		}
		return "request_invalid", []string{e.doc.Code}
	}
	switch e.kind {
	case refusedUnauthenticated, refusedNotFound, refusedNoRoute, refusedMethod:
		return "", nil
	case refusedMissing:
		return "request_invalid", []string{shortOf(e.param) + "_required"}
	case refusedRejected:
		return "action_failure", []string{"refund_declined"}
	case refusedKeyInUse:
		return "request_in_progress", nil
	case refusedOtherParameters:
		return "request_invalid", []string{"idempotency_key_reused"}
	case refusedProviderError:
		return "internal_error", nil
	case refusedUnavailable:
		return "service_unavailable", nil
	}
	if e.param != "" {
		return "request_invalid", []string{shortOf(e.param) + "_invalid"}
	}
	return "request_invalid", []string{"request_invalid"}
}

// checkoutRefundRequest is a refund request, the fields serve reads.
type checkoutRefundRequest struct {
	Amount    *int64            `json:"amount"`
	Currency  *string           `json:"currency"`
	Reference *string           `json:"reference"`
	Metadata  map[string]string `json:"metadata"`
}

// checkoutID is a refund's action id.
func checkoutID(id ledger.ObjectID) string { return wireID("act_rl", id, 20) }

// checkoutPrincipal is the secret key of Authorization, with or without
// Bearer.
func checkoutPrincipal(r *http.Request) (string, *refusal) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if t := bearer(r); t != "" {
		h = t
	}
	if h == "" {
		return "", refuse(refusedUnauthenticated, "", "Unauthorized: send Authorization: Bearer sk_... (any key; it is the principal the idempotency digest binds).")
	}
	return h, nil
}

func (s *Server) checkoutRefund(w http.ResponseWriter, r *http.Request) {
	var in checkoutRefundRequest
	s.createJSON(w, r, jsonCreate{
		principal: checkoutPrincipal, keyHeader: "Cko-Idempotency-Key", in: &in, optional: true,
		decode: func() (refundParams, *refusal) { return in.decode(r.PathValue("id")) },
		render: func(t createTurn, p refundParams) []byte {
			return marshal(map[string]any{
				"action_id": checkoutID(t.obj.ID),
				"reference": p.Other["reference"],
				"_links":    map[string]any{"payment": map[string]string{"href": "/payments/" + p.Charge}},
			})
		},
	})
}

// decode checks a refund request as Checkout.com does; the payment is
// the charge.
func (in checkoutRefundRequest) decode(payment string) (refundParams, *refusal) {
	p := refundParams{Charge: payment, Other: map[string]string{}, Metadata: map[string]string{}}
	if payment == "" || len(payment) > 64 {
		return p, invalidParam("payment_id", "The payment id in the path is not one Checkout.com issues (pay_...).")
	}
	if in.Amount == nil {
		return p, refuse(refusedMissing, "amount", "Give amount in minor units: this provider holds no payments to take a full refund's amount from, e.g. {\"amount\":4500}.")
	}
	if e := checkAmount("amount", *in.Amount); e != nil {
		return p, e
	}
	p.Amount = *in.Amount
	p.Currency = "usd"
	if in.Currency != nil {
		if e := checkCurrency("currency", *in.Currency); e != nil {
			return p, e
		}
		p.Currency = strings.ToLower(*in.Currency)
	}
	if in.Reference != nil {
		if len(*in.Reference) > 80 {
			return p, invalidParam("reference", "The reference is longer than the 80 characters Checkout.com takes.")
		}
		p.Other["reference"] = strings.TrimSpace(*in.Reference)
	}
	for k, v := range in.Metadata {
		if e := checkMetadata("metadata["+k+"]", k, []string{v}); e != nil {
			return p, e
		}
		p.Metadata[k] = v
	}
	return p, nil
}

// checkoutAction is a refund as an action of its payment.
type checkoutAction struct {
	ID              string            `json:"id"`
	Type            string            `json:"type"`
	ProcessedOn     string            `json:"processed_on"`
	Amount          int64             `json:"amount"`
	Approved        *bool             `json:"approved,omitempty"`
	ResponseCode    string            `json:"response_code,omitempty"`
	ResponseSummary string            `json:"response_summary"`
	Reference       string            `json:"reference,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
}

// checkoutActionOf is a refund as its payment's actions list it: a
// pending refund is not yet approved or declined.
func checkoutActionOf(o ledger.Object, created int64) checkoutAction {
	p := parsePayload(o.Payload)
	a := checkoutAction{ID: checkoutID(o.ID), Type: "Refund", ProcessedOn: time.Unix(created, 0).UTC().Format(time.RFC3339), Amount: p.Amount, Reference: p.Other["reference"]}
	if len(p.Metadata) > 0 {
		a.Metadata = p.Metadata
	}
	yes, no := true, false
	switch o.Status {
	case ledger.Succeeded:
		a.Approved, a.ResponseCode, a.ResponseSummary = &yes, "10000", "Approved"
	case ledger.Pending:
		a.ResponseSummary = "Pending"
	default:
		a.Approved, a.ResponseCode, a.ResponseSummary = &no, "20005", "Declined - Do Not Honour"
	}
	return a
}

// checkoutActions serves GET /payments/{id}/actions: the payment's
// refunds, newest first, as a read of the ledger by charge.
func (s *Server) checkoutActions(w http.ResponseWriter, r *http.Request) {
	if _, e := checkoutPrincipal(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	payment := r.PathValue("id")
	lq := listQuery{charge: payment, limit: 100, from: math.MinInt64, to: math.MaxInt64}
	query := url.Values{"charge": {payment}, "limit": {"100"}}.Encode()
	s.readList(w, r, lq, query, func(page []ledger.Object, _ bool) []byte {
		out := []checkoutAction{}
		for _, o := range page {
			out = append(out, checkoutActionOf(o, s.c.created(o)))
		}
		return marshal(out)
	})
}
