package serve

import (
	"strconv"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// replyTo is what a delivered create gets: the HTTP status, the error (nil
// for a refund), and the refund it shows, with the status it shows.
func replyTo(res ledger.Result, p *ledger.Profile) (int, *refusal, []missions.EvidenceObject) {
	if res.Response.Code == ledger.CodeOK {
		return 200, nil, []missions.EvidenceObject{{Object: res.Response.Object, Status: res.Response.Status}}
	}
	e := providerError(res, p)
	return e.status(), e, nil
}

// providerError is the error reply for a ledger response that is not a
// success, under profile p: Stripe's own words for the first three
// profiles, as before; for every other, the profile's documented refusal
// (its status, its code, its message), and never a Stripe promise the
// profile does not make.
func providerError(res ledger.Result, p *ledger.Profile) *refusal {
	if doc := p.RefusalOf(res.Action, res.Response); doc != nil && !providers.Short(providers.CaseName(p)) {
		why := doc.Message
		if why == "" {
			why = "The provider refused the request (" + doc.String() + ")."
		}
		return &refusal{kind: refusalOf(res.Action), why: why, doc: doc}
	}
	switch res.Action {
	case ledger.Conflict:
		return errInUse
	case ledger.Mismatch:
		return errMismatch
	}
	switch {
	case res.Response.Code == ledger.CodeBadRequest && p.FailedKey != nil:
		return errRejectedFinal
	case res.Response.Code == ledger.CodeBadRequest:
		return errRejected
	case res.Response.Code == ledger.CodeServerError && p.Saves != ledger.SavesAll:
		return errServerNotKept
	case res.Response.Code == ledger.CodeServerError:
		return errServer
	}
	return &refusal{kind: refusedProviderError, why: "The provider answered " + strconv.Itoa(res.Response.Code) + ".", doc: &ledger.Refusal{Status: res.Response.Code, Code: "provider_error"}}
}

// refusalOf is the kind of refusal a ledger action is.
func refusalOf(a ledger.Action) refusalKind {
	switch a {
	case ledger.Conflict:
		return refusedKeyInUse
	case ledger.Mismatch:
		return refusedOtherParameters
	}
	return refusedRejected
}

// refundJSON is a refund object as Stripe renders one, made from the
// ledger's object and the status the reply gives: every field of
// stripe-node's Refund type, null where this provider has nothing to say
// (it holds no charges, customers or balance transactions), so that a
// client reading any of them finds the key it would find at Stripe.
type refundJSON struct {
	ID                        string            `json:"id"`
	Object                    string            `json:"object"`
	Amount                    int64             `json:"amount"`
	BalanceTransaction        *string           `json:"balance_transaction"`
	Charge                    *string           `json:"charge"`
	Created                   int64             `json:"created"`
	Currency                  string            `json:"currency"`
	Customer                  *string           `json:"customer"`
	CustomerAccount           *string           `json:"customer_account"`
	Description               *string           `json:"description"`
	DestinationDetails        *struct{}         `json:"destination_details"`
	FailureBalanceTransaction *string           `json:"failure_balance_transaction"`
	FailureReason             *string           `json:"failure_reason"`
	InstructionsEmail         *string           `json:"instructions_email"`
	Metadata                  map[string]string `json:"metadata"`
	NextAction                *struct{}         `json:"next_action"`
	PaymentIntent             *string           `json:"payment_intent"`
	PaymentMethod             *string           `json:"payment_method"`
	PendingReason             *string           `json:"pending_reason"`
	PresentmentDetails        *struct{}         `json:"presentment_details"`
	Reason                    *string           `json:"reason"`
	ReceiptNumber             *string           `json:"receipt_number"`
	SourceTransferReversal    *string           `json:"source_transfer_reversal"`
	Status                    string            `json:"status"`
	TransferReversal          *string           `json:"transfer_reversal"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// refundOf renders object o with status st; created is its Unix time.
func refundOf(o ledger.Object, st ledger.Status, created int64) refundJSON {
	p := parsePayload(o.Payload)
	r := refundJSON{
		ID:                o.ID.String(),
		Object:            "refund",
		Amount:            p.Amount,
		Charge:            optional(p.Charge),
		Created:           created,
		Currency:          p.Currency,
		Customer:          optional(p.Other["customer"]),
		InstructionsEmail: optional(p.Other["instructions_email"]),
		Metadata:          p.Metadata,
		PaymentIntent:     optional(p.PaymentIntent),
		Reason:            optional(p.Reason),
		Status:            st.String(),
	}
	if r.Currency == "" {
		r.Currency = "usd"
	}
	switch st {
	case ledger.Pending:
		r.PendingReason = optional("processing")
	case ledger.Failed:
		r.FailureReason = optional("unknown")
	}
	return r
}

// shownOf is what a reply that shows objects tells of them: each one with
// the status shown.
func shownOf(objs ...ledger.Object) []missions.EvidenceObject {
	out := make([]missions.EvidenceObject, len(objs))
	for i, o := range objs {
		out[i] = missions.EvidenceObject{Object: o.ID, Status: o.Status}
	}
	return out
}

// listJSON is a Stripe list of refunds.
type listJSON struct {
	Object  string       `json:"object"`
	Data    []refundJSON `json:"data"`
	HasMore bool         `json:"has_more"`
	URL     string       `json:"url"`
}

// notFound answers a retrieve of a refund that does not exist.
func notFound(id string) *refusal {
	return refuse(refusedNotFound, "id", "No such refund: '"+termtext.Shorten(id, 200)+"'")
}
