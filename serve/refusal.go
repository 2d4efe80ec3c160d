package serve

// Refusals: the provider's answers that are not a refund, as data. The
// core and the decoders answer with a refusal (what was wrong, the
// parameter at fault, the words for a person); each wire renders it in
// its own shape: REST as Stripe's error object (stripe.go), MCP as a tool
// error (tools.errResult), and the session records it by its status and
// words (refusal.words). A new wire renders refusals; it adds nothing to
// the core.

import (
	"net/http"

	"github.com/replaylab/replaylab/ledger"
)

// refusal is an answer that is not a refund.
type refusal struct {
	kind  refusalKind
	param string
	why   string
	// doc, when set, is the provider profile's documented refusal this
	// is: its status and code are the answer's.
	doc *ledger.Refusal
}

// refusalKind is what a refusal says went wrong.
type refusalKind uint8

const (
	// refusedUnknown: a parameter the request does not take.
	refusedUnknown refusalKind = iota
	// refusedNotWhole: a parameter that must be a whole number in range.
	refusedNotWhole
	// refusedMissing: a parameter the request needs.
	refusedMissing
	// refusedInvalid: a parameter's value, or a header's, is not one the
	// provider takes.
	refusedInvalid
	// refusedTooLarge: the body is over the largest a request can be.
	refusedTooLarge
	// refusedSlow: the body did not arrive in time.
	refusedSlow
	// refusedRequest: the request cannot be taken as it stands: a cancel
	// of a refund that is not pending, a body that could not be read.
	refusedRequest
	// refusedUnauthenticated: the request carries no credentials.
	refusedUnauthenticated
	// refusedNotFound: no such object.
	refusedNotFound
	// refusedNoRoute: no such path, or no such control.
	refusedNoRoute
	// refusedMethod: the path does not take the request's method.
	refusedMethod
	// refusedRejected: the provider refused the create before executing
	// it (failure_before_commit); nothing was saved under its key.
	refusedRejected
	// refusedKeyInUse: another request under the key is executing.
	refusedKeyInUse
	// refusedOtherParameters: the key was first used with other
	// parameters.
	refusedOtherParameters
	// refusedProviderError: the provider failed (server_error_after_commit,
	// read_server_error, a session it could not write).
	refusedProviderError
	// refusedUnavailable: the provider cannot take the request now (it
	// could not record it durably, it is stopping, it is full).
	refusedUnavailable
)

// status is the HTTP status of a refusal, the same on every wire that
// speaks HTTP.
func (e *refusal) status() int {
	if e.doc != nil {
		return e.doc.Status
	}
	switch e.kind {
	case refusedTooLarge:
		return http.StatusRequestEntityTooLarge
	case refusedSlow:
		return http.StatusRequestTimeout
	case refusedUnauthenticated:
		return http.StatusUnauthorized
	case refusedNotFound, refusedNoRoute:
		return http.StatusNotFound
	case refusedMethod:
		return http.StatusMethodNotAllowed
	case refusedKeyInUse:
		return ledger.CodeConflict
	case refusedOtherParameters:
		return ledger.CodeMismatch
	case refusedProviderError:
		return ledger.CodeServerError
	case refusedUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

func (e *refusal) Error() string { return e.why }

// refuse is a refusal of kind, naming param ("" for none), in words why.
func refuse(kind refusalKind, param, why string) *refusal {
	return &refusal{kind: kind, param: param, why: why}
}

// invalidParam refuses the value of param.
func invalidParam(param, why string) *refusal { return refuse(refusedInvalid, param, why) }

// The refusals the provider answers a create with, by what the ledger did.
var (
	errRejected = refuse(refusedRejected, "",
		"The refund was refused before it was executed (fault failure_before_commit). Nothing was saved under the idempotency key, so a corrected retry with the same key is allowed.")
	errInUse = refuse(refusedKeyInUse, "",
		"There is currently another in-progress request using this idempotency key. Nothing was saved for this request: wait, then retry with the same key. A new key could start a second refund.")
	errRejectedFinal = refuse(refusedRejected, "",
		"The refund was refused before it was executed (fault failure_before_commit). This provider makes a key final once an attempt under it failed: retry with a new idempotency key.")
	errMismatch = refuse(refusedOtherParameters, "",
		"Keys for idempotent requests can only be used with the same parameters they were first used with. This request's parameters differ from the first one's; it was refused and nothing was executed.")
	errServerNotKept = refuse(refusedProviderError, "",
		"An error occurred on the provider while it processed the refund (fault server_error_after_commit). The refund may have been created; this provider does not keep a 5xx under the idempotency key, so a retry under the same key runs again.")
	errServer = refuse(refusedProviderError, "",
		"An error occurred on the provider while it processed the refund (fault server_error_after_commit). The refund may have been created; this response is saved under the idempotency key.")
)
