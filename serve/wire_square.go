package serve

// Square's wire: the Refunds API. POST /v2/refunds takes its
// idempotency_key in the body; GET /v2/refunds/{refund_id} reads one
// refund and GET /v2/refunds lists them, newest first, by cursor.

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/replaylab/replaylab/ledger"
)

type squareWire struct{}

func (squareWire) name() string { return WireSquare }

func (squareWire) routes(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("/v2/refunds", s.methods(map[string]http.HandlerFunc{http.MethodPost: s.squareRefund, http.MethodGet: s.squareList}))
	mux.HandleFunc("/v2/refunds/{id}", s.methods(map[string]http.HandlerFunc{http.MethodGet: s.squareGet}))
}

func (squareWire) serves() string {
	return "POST /v2/refunds, GET /v2/refunds and GET /v2/refunds/{refund_id}"
}

func (squareWire) intentFields() []string { return []string{"reason"} }

func (squareWire) status(e *refusal) int { return e.status() }

func (squareWire) created(bool) int { return http.StatusOK }

// SquareVersion is the Square-Version serve answers in when a request
// names none.
const SquareVersion = "2025-10-16"

func (squareWire) stamp(h http.Header, r *http.Request, id string, _ int, _ *refusal) {
	h.Set("X-Request-Id", id)
	v := r.Header.Get("Square-Version")
	if v == "" || len(v) > 20 || strings.Trim(v, "0123456789-") != "" {
		v = SquareVersion
	}
	h.Set("Square-Version", v)
}

// squareErr is one of Square's errors.
type squareErr struct {
	Category string `json:"category"`
	Code     string `json:"code"`
	Detail   string `json:"detail"`
	Field    string `json:"field,omitempty"`
}

func (squareWire) errorBody(e *refusal, _ string) []byte {
	cat, code := squareWords(e)
	return marshal(struct {
		Errors []squareErr `json:"errors"`
	}{[]squareErr{{Category: cat, Code: code, Detail: e.why, Field: e.param}}})
}

// squareWords are Square's category and code for a refusal.
func squareWords(e *refusal) (category, code string) {
	if e.doc != nil {
		switch {
		case e.doc.Status >= 500:
			return "API_ERROR", e.doc.Code
		case e.doc.Code == "REFUND_AMOUNT_INVALID":
			return "REFUND_ERROR", e.doc.Code
		}
		return "INVALID_REQUEST_ERROR", e.doc.Code
	}
	switch e.kind {
	case refusedUnauthenticated:
		return "AUTHENTICATION_ERROR", "UNAUTHORIZED"
	case refusedNotFound, refusedNoRoute:
		return "INVALID_REQUEST_ERROR", "NOT_FOUND"
	case refusedMethod:
		return "INVALID_REQUEST_ERROR", "METHOD_NOT_ALLOWED"
	case refusedMissing:
		return "INVALID_REQUEST_ERROR", "MISSING_REQUIRED_PARAMETER"
	case refusedNotWhole:
		return "INVALID_REQUEST_ERROR", "EXPECTED_INTEGER"
	case refusedTooLarge:
		return "INVALID_REQUEST_ERROR", "REQUEST_ENTITY_TOO_LARGE"
	case refusedRejected:
		return "REFUND_ERROR", "REFUND_DECLINED"
	case refusedKeyInUse:
		return "INVALID_REQUEST_ERROR", "CONFLICT"
	case refusedOtherParameters:
		return "INVALID_REQUEST_ERROR", "IDEMPOTENCY_KEY_REUSED"
	case refusedProviderError:
		return "API_ERROR", "INTERNAL_SERVER_ERROR"
	case refusedUnavailable:
		return "API_ERROR", "SERVICE_UNAVAILABLE"
	}
	return "INVALID_REQUEST_ERROR", "INVALID_VALUE"
}

// squareMoney is Square's Money: minor units and a currency.
type squareMoney struct {
	Amount   *int64  `json:"amount"`
	Currency *string `json:"currency"`
}

// squareRefundRequest is RefundPaymentRequest, the fields serve reads.
type squareRefundRequest struct {
	IdempotencyKey *string      `json:"idempotency_key"`
	AmountMoney    *squareMoney `json:"amount_money"`
	PaymentID      *string      `json:"payment_id"`
	Reason         *string      `json:"reason"`
	LocationID     *string      `json:"location_id"`
}

type squareMoneyJSON struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// squareRefundJSON is PaymentRefund.
type squareRefundJSON struct {
	ID          string          `json:"id"`
	Status      string          `json:"status"`
	LocationID  string          `json:"location_id,omitempty"`
	AmountMoney squareMoneyJSON `json:"amount_money"`
	PaymentID   string          `json:"payment_id"`
	Reason      string          `json:"reason,omitempty"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
}

// squareID is a refund's id: the payment's, then the refund's own, as
// Square writes them.
func squareID(o ledger.Object, payment string) string {
	return payment + "_" + wireID("rl", o.ID, 8)
}

// squareLedgerID is the ledger's id of a Square refund id, or "".
func squareLedgerID(raw string) string {
	i := strings.LastIndexByte(raw, '_')
	if i < 0 {
		return ""
	}
	return parseWireID(raw[i+1:], "rl", 8)
}

// squarePrincipal is the access token.
func squarePrincipal(r *http.Request) (string, *refusal) {
	if t := bearer(r); t != "" {
		return t, nil
	}
	return "", refuse(refusedUnauthenticated, "", "This request could not be authorized: send Authorization: Bearer ACCESS_TOKEN (any token; it is the principal the idempotency digest binds).")
}

func (s *Server) squareRefund(w http.ResponseWriter, r *http.Request) {
	var in squareRefundRequest
	s.createJSON(w, r, jsonCreate{
		principal: squarePrincipal, in: &in, bodyKey: func() *string { return in.IdempotencyKey },
		decode: func() (refundParams, *refusal) { return in.decode() },
		render: func(t createTurn, _ refundParams) []byte {
			return marshal(struct {
				Refund squareRefundJSON `json:"refund"`
			}{squareRefundOf(t.obj, t.res.Response.Status, t.created)})
		},
	})
}

// decode checks a refund request as Square does; the payment is the
// charge.
func (in squareRefundRequest) decode() (refundParams, *refusal) {
	p := refundParams{Other: map[string]string{}, Metadata: map[string]string{}}
	switch {
	case in.PaymentID == nil || strings.TrimSpace(*in.PaymentID) == "":
		return p, refuse(refusedMissing, "payment_id", "Field must be set: payment_id (the payment to refund).")
	case len(*in.PaymentID) > 192:
		return p, invalidParam("payment_id", "Field must not be greater than 192 characters: payment_id.")
	case in.AmountMoney == nil || in.AmountMoney.Amount == nil:
		return p, refuse(refusedMissing, "amount_money.amount", "Field must be set: amount_money (amount in minor units and currency).")
	case in.AmountMoney.Currency == nil:
		return p, refuse(refusedMissing, "amount_money.currency", "Field must be set: amount_money.currency.")
	}
	if e := checkAmount("amount_money.amount", *in.AmountMoney.Amount); e != nil {
		return p, e
	}
	if e := checkCurrency("amount_money.currency", *in.AmountMoney.Currency); e != nil {
		return p, e
	}
	p.Charge, p.Amount, p.Currency = strings.TrimSpace(*in.PaymentID), *in.AmountMoney.Amount, strings.ToLower(*in.AmountMoney.Currency)
	if in.Reason != nil {
		if len([]rune(*in.Reason)) > 192 {
			return p, invalidParam("reason", "Field must not be greater than 192 characters: reason.")
		}
		p.Reason = strings.TrimSpace(*in.Reason)
	}
	if in.LocationID != nil {
		p.Other["location_id"] = *in.LocationID
	}
	return p, nil
}

// squareRefundOf is a refund as Square shows it.
func squareRefundOf(o ledger.Object, st ledger.Status, created int64) squareRefundJSON {
	p := parsePayload(o.Payload)
	at := time.Unix(created, 0).UTC().Format("2006-01-02T15:04:05.000Z")
	return squareRefundJSON{
		ID:          squareID(o, p.Charge),
		Status:      wireStatus(st, [4]string{"COMPLETED", "PENDING", "FAILED", "REJECTED"}),
		LocationID:  p.Other["location_id"],
		AmountMoney: squareMoneyJSON{Amount: p.Amount, Currency: strings.ToUpper(p.Currency)},
		PaymentID:   p.Charge,
		Reason:      p.Reason,
		CreatedAt:   at,
		UpdatedAt:   at,
	}
}

func (s *Server) squareGet(w http.ResponseWriter, r *http.Request) {
	if _, e := squarePrincipal(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	raw := r.PathValue("id")
	s.readOne(w, r, squareLedgerID(raw), raw, func(o ledger.Object) []byte {
		return marshal(struct {
			Refund squareRefundJSON `json:"refund"`
		}{squareRefundOf(o, o.Status, s.c.created(o))})
	})
}

// squareList serves GET /v2/refunds: every refund, newest first, a page
// of limit (at most 100) from the cursor on.
func (s *Server) squareList(w http.ResponseWriter, r *http.Request) {
	if _, e := squarePrincipal(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	q, e := readQuery(r)
	lq := listQuery{limit: 100, from: math.MinInt64, to: math.MaxInt64}
	for name, vs := range q {
		if e != nil {
			break
		}
		v := vs[len(vs)-1]
		switch name {
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100 {
				e = refuse(refusedNotWhole, "limit", "Invalid limit "+quoteShort(v)+": give a whole number from 1 to 100.")
			}
			lq.limit = n
		case "cursor":
			if lq.after = squareLedgerID(v); lq.after == "" {
				e = invalidParam("cursor", "The cursor "+quoteShort(v)+" is not one this list gave.")
			}
		case "sort_order", "location_id", "source_type", "status", "begin_time", "end_time":
			// Taken and not acted on: the list is newest first.
		default:
			e = refuse(refusedUnknown, shortOf(name), "Unknown query parameter "+quoteShort(name)+": the list takes cursor and limit.")
		}
	}
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	// Logged in Stripe's words, as a replay reads a list back.
	logged := url.Values{"limit": {strconv.Itoa(lq.limit)}}
	if lq.after != "" {
		logged.Set("starting_after", lq.after)
	}
	s.readList(w, r, lq, logged.Encode(), func(page []ledger.Object, more bool) []byte {
		out := struct {
			Refunds []squareRefundJSON `json:"refunds"`
			Cursor  string             `json:"cursor,omitempty"`
		}{Refunds: []squareRefundJSON{}}
		for _, o := range page {
			out.Refunds = append(out.Refunds, squareRefundOf(o, o.Status, s.c.created(o)))
		}
		if more && len(out.Refunds) > 0 {
			out.Cursor = out.Refunds[len(out.Refunds)-1].ID
		}
		return marshal(out)
	})
}
