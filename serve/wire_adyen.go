package serve

// Adyen's wire: the Checkout API's refund of a captured payment,
// POST /checkout/v71/payments/{paymentPspReference}/refunds, answered 201
// with status "received". Adyen tells a refund's outcome only by webhook
// (webhook.go); there is no read of a refund.

import (
	"net/http"
	"strings"

	"github.com/replaylab/replaylab/ledger"
)

type adyenWire struct{}

func (adyenWire) name() string { return WireAdyen }

// adyenVersions are the Checkout API versions the refund is served
// under: v71, and the versions the SDKs of the last years call
// (@adyen/api-library 32.1.0 calls v72).
var adyenVersions = []string{"v68", "v69", "v70", "v71", "v72"}

func (adyenWire) routes(s *Server, mux *http.ServeMux) {
	h := s.methods(map[string]http.HandlerFunc{http.MethodPost: s.adyenRefund})
	for _, v := range adyenVersions {
		mux.HandleFunc("/checkout/"+v+"/payments/{psp}/refunds", h)
		// The library calls the host's root, as checkout-test.adyen.com/v72
		// serves it.
		mux.HandleFunc("/"+v+"/payments/{psp}/refunds", h)
	}
}

func (adyenWire) serves() string {
	return "POST /checkout/v71/payments/{paymentPspReference}/refunds (v68 to v72), with its outcome as REFUND webhooks"
}

func (adyenWire) intentFields() []string { return []string{"reference"} }

// status: Adyen answers a request it cannot take 422.
func (adyenWire) status(e *refusal) int { return validationStatus(e, http.StatusUnprocessableEntity) }

func (adyenWire) created(bool) int { return http.StatusCreated }

// stamp: Adyen's replies carry the pspReference of what they answer.
func (adyenWire) stamp(h http.Header, _ *http.Request, id string, _ int, _ *refusal) {
	h.Set("pspReference", id)
}

// adyenError is Adyen's error object (ServiceError).
type adyenError struct {
	Status       int    `json:"status"`
	ErrorCode    string `json:"errorCode"`
	Message      string `json:"message"`
	ErrorType    string `json:"errorType"`
	PspReference string `json:"pspReference"`
}

func (adyenWire) errorBody(e *refusal, id string) []byte {
	code, typ := adyenWords(e)
	// The library reads the status from the body, not the status line:
	// the two are the same.
	return marshal(adyenError{Status: adyenWire{}.status(e), ErrorCode: code, Message: e.why, ErrorType: typ, PspReference: id})
}

// adyenWords are Adyen's errorCode and errorType for a refusal.
func adyenWords(e *refusal) (code, typ string) {
	if e.doc != nil {
		return e.doc.Code, "validation"
	}
	switch e.kind {
	case refusedUnauthenticated:
		return "000", "security"
	case refusedNotFound, refusedNoRoute:
		return "000", "validation"
	case refusedMethod:
		return "000", "validation"
	case refusedRejected:
		return "167", "validation" // Original pspReference required for this operation
	case refusedMissing:
		return "100", "validation" // No amount specified
	case refusedKeyInUse:
		return "704", "validation"
	case refusedOtherParameters:
		return "704", "validation"
	case refusedProviderError:
		return "905", "internal"
	case refusedUnavailable:
		return "905", "internal"
	case refusedTooLarge, refusedSlow, refusedRequest:
		return "702", "validation"
	}
	return "702", "validation" // Unable to parse the request
}

// adyenAmount is Adyen's Amount: minor units and a currency.
type adyenAmount struct {
	Currency *string `json:"currency"`
	Value    *int64  `json:"value"`
}

// adyenRefundRequest is PaymentRefundRequest, the fields serve reads.
type adyenRefundRequest struct {
	Amount               *adyenAmount `json:"amount"`
	MerchantAccount      *string      `json:"merchantAccount"`
	Reference            *string      `json:"reference"`
	MerchantRefundReason *string      `json:"merchantRefundReason"`
}

// adyenRefundJSON is PaymentRefundResponse.
type adyenRefundJSON struct {
	Amount               adyenAmountJSON `json:"amount"`
	MerchantAccount      string          `json:"merchantAccount"`
	MerchantRefundReason string          `json:"merchantRefundReason,omitempty"`
	PaymentPspReference  string          `json:"paymentPspReference"`
	PspReference         string          `json:"pspReference"`
	Reference            string          `json:"reference,omitempty"`
	Status               string          `json:"status"`
}

type adyenAmountJSON struct {
	Currency string `json:"currency"`
	Value    int64  `json:"value"`
}

// adyenID is a refund's pspReference: 16 characters, as Adyen's are.
func adyenID(id ledger.ObjectID) string { return wireID("RL", id, 14) }

// adyenPrincipal is the API key of X-API-Key, or of basic auth (Adyen's
// web service user).
func adyenPrincipal(r *http.Request) (string, *refusal) {
	if k := strings.TrimSpace(r.Header.Get("X-API-Key")); k != "" {
		return k, nil
	}
	if u, _, ok := r.BasicAuth(); ok && u != "" {
		return u, nil
	}
	return "", refuse(refusedUnauthenticated, "", "HTTP Status Response - Unauthorized: send the API key in the X-API-Key header (any key; it is the principal the idempotency digest binds).")
}

// adyenRefund serves the refund of a captured payment.
func (s *Server) adyenRefund(w http.ResponseWriter, r *http.Request) {
	var in adyenRefundRequest
	s.createJSON(w, r, jsonCreate{
		principal: adyenPrincipal, keyHeader: "Idempotency-Key", in: &in,
		decode: func() (refundParams, *refusal) { return in.decode(r.PathValue("psp")) },
		render: func(t createTurn, _ refundParams) []byte { return marshal(adyenRefundOf(t.obj)) },
	})
}

// decode checks the request as Adyen does and makes the core's
// parameters of it: the payment is the charge.
func (in adyenRefundRequest) decode(psp string) (refundParams, *refusal) {
	p := refundParams{Charge: psp, Other: map[string]string{}, Metadata: map[string]string{}}
	switch {
	case psp == "" || len(psp) > 64:
		return p, invalidParam("paymentPspReference", "The paymentPspReference in the path is not one Adyen issues (1 to 64 characters).")
	case in.MerchantAccount == nil || strings.TrimSpace(*in.MerchantAccount) == "":
		return p, refuse(refusedMissing, "merchantAccount", "Required field 'merchantAccount' is not provided.")
	case in.Amount == nil || in.Amount.Value == nil:
		return p, refuse(refusedMissing, "amount.value", "Required field 'amount' is not provided: give amount.value in minor units and amount.currency, e.g. {\"currency\":\"EUR\",\"value\":4500}.")
	case in.Amount.Currency == nil:
		return p, refuse(refusedMissing, "amount.currency", "Required field 'amount.currency' is not provided.")
	}
	if e := checkAmount("amount.value", *in.Amount.Value); e != nil {
		return p, e
	}
	if e := checkCurrency("amount.currency", *in.Amount.Currency); e != nil {
		return p, e
	}
	p.Amount, p.Currency = *in.Amount.Value, strings.ToLower(*in.Amount.Currency)
	p.Other["merchantAccount"] = *in.MerchantAccount
	for name, v := range map[string]*string{"reference": in.Reference, "merchantRefundReason": in.MerchantRefundReason} {
		if v == nil {
			continue
		}
		if e := checkString(name, *v); e != nil {
			return p, e
		}
		p.Other[name] = strings.TrimSpace(*v)
	}
	return p, nil
}

// adyenRefundOf is the 201's body: a refund received, whatever becomes
// of it (a webhook tells).
func adyenRefundOf(o ledger.Object) adyenRefundJSON {
	p := parsePayload(o.Payload)
	return adyenRefundJSON{
		Amount:               adyenAmountJSON{Currency: strings.ToUpper(p.Currency), Value: p.Amount},
		MerchantAccount:      p.Other["merchantAccount"],
		MerchantRefundReason: p.Other["merchantRefundReason"],
		PaymentPspReference:  p.Charge,
		PspReference:         adyenID(o.ID),
		Reference:            p.Other["reference"],
		Status:               "received",
	}
}
