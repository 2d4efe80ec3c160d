package serve

// The Stripe wire's rendering of a refusal: Stripe's error object,
// {"error": {"type", "code", "message", "param"}}, whose type and code are
// also the words a session records a refusal by.

import "github.com/replaylab/replaylab/ledger"

// apiError is a refusal as Stripe shapes an error.
type apiError struct {
	Status  int    `json:"-"`
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

// stripe is e as Stripe's error object.
func (e *refusal) stripe() *apiError {
	typ, code := stripeWords(e.kind)
	if e.doc != nil {
		code = e.doc.Code
	}
	return &apiError{Status: e.status(), Type: typ, Code: code, Message: e.why, Param: e.param}
}

// stripeWords are Stripe's type and code ("" for none) of a refusal of
// kind.
func stripeWords(kind refusalKind) (typ, code string) {
	switch kind {
	case refusedUnknown:
		return ledger.ErrorInvalidRequest, "parameter_unknown"
	case refusedNotWhole:
		return ledger.ErrorInvalidRequest, "parameter_invalid_integer"
	case refusedMissing:
		return ledger.ErrorInvalidRequest, "parameter_missing"
	case refusedInvalid, refusedTooLarge:
		return ledger.ErrorInvalidRequest, "parameter_invalid"
	case refusedNotFound:
		return ledger.ErrorInvalidRequest, "resource_missing"
	case refusedRejected:
		return ledger.ErrorInvalidRequest, "refund_rejected"
	case refusedKeyInUse:
		return ledger.ErrorIdempotency, "idempotency_key_in_use"
	case refusedOtherParameters:
		return ledger.ErrorIdempotency, ""
	case refusedProviderError, refusedUnavailable:
		return ledger.ErrorAPI, ""
	}
	return ledger.ErrorInvalidRequest, ""
}

// body is e as the body of a Stripe error reply.
func (e *refusal) body() []byte {
	return marshal(struct {
		Error *apiError `json:"error"`
	}{e.stripe()})
}

// words is how a session records e: Stripe's type, and its code where it
// has one ("idempotency_error/idempotency_key_in_use"); "" for no
// refusal.
func (e *refusal) words() string {
	if e == nil {
		return ""
	}
	typ, code := stripeWords(e.kind)
	if e.doc != nil {
		code = e.doc.Code
	}
	if code == "" {
		return typ
	}
	return typ + "/" + code
}
