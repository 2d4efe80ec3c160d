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
	out := &apiError{Status: e.status(), Type: ledger.ErrorInvalidRequest, Message: e.why, Param: e.param}
	switch e.kind {
	case refusedUnknown:
		out.Code = "parameter_unknown"
	case refusedNotWhole:
		out.Code = "parameter_invalid_integer"
	case refusedMissing:
		out.Code = "parameter_missing"
	case refusedInvalid, refusedTooLarge:
		out.Code = "parameter_invalid"
	case refusedNotFound:
		out.Code = "resource_missing"
	case refusedRejected:
		out.Code = "refund_rejected"
	case refusedKeyInUse:
		out.Type, out.Code = ledger.ErrorIdempotency, "idempotency_key_in_use"
	case refusedOtherParameters:
		out.Type = ledger.ErrorIdempotency
	case refusedProviderError, refusedUnavailable:
		out.Type = ledger.ErrorAPI
	}
	return out
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
	s := e.stripe()
	if s.Code == "" {
		return s.Type
	}
	return s.Type + "/" + s.Code
}
