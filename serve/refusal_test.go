package serve

import (
	"encoding/json"
	"strings"
	"testing"
)

// Each refusal renders on the Stripe wire as Stripe answers that error:
// its status, type and code; and a session records it by type/code.
func TestRefusalsRenderAsStripe(t *testing.T) {
	for _, tt := range []struct {
		kind         refusalKind
		status       int
		typ, code    string
		sessionWords string
	}{
		{refusedUnknown, 400, "invalid_request_error", "parameter_unknown", "invalid_request_error/parameter_unknown"},
		{refusedNotWhole, 400, "invalid_request_error", "parameter_invalid_integer", "invalid_request_error/parameter_invalid_integer"},
		{refusedMissing, 400, "invalid_request_error", "parameter_missing", "invalid_request_error/parameter_missing"},
		{refusedInvalid, 400, "invalid_request_error", "parameter_invalid", "invalid_request_error/parameter_invalid"},
		{refusedTooLarge, 413, "invalid_request_error", "parameter_invalid", "invalid_request_error/parameter_invalid"},
		{refusedSlow, 408, "invalid_request_error", "", "invalid_request_error"},
		{refusedRequest, 400, "invalid_request_error", "", "invalid_request_error"},
		{refusedUnauthenticated, 401, "invalid_request_error", "", "invalid_request_error"},
		{refusedNotFound, 404, "invalid_request_error", "resource_missing", "invalid_request_error/resource_missing"},
		{refusedNoRoute, 404, "invalid_request_error", "", "invalid_request_error"},
		{refusedMethod, 405, "invalid_request_error", "", "invalid_request_error"},
		{refusedRejected, 400, "invalid_request_error", "refund_rejected", "invalid_request_error/refund_rejected"},
		{refusedKeyInUse, 409, "idempotency_error", "idempotency_key_in_use", "idempotency_error/idempotency_key_in_use"},
		{refusedOtherParameters, 400, "idempotency_error", "", "idempotency_error"},
		{refusedProviderError, 500, "api_error", "", "api_error"},
		{refusedUnavailable, 503, "api_error", "", "api_error"},
	} {
		e := refuse(tt.kind, "amount", "why it was refused")
		w := e.stripe()
		if w.Status != tt.status || e.status() != tt.status || w.Type != tt.typ || w.Code != tt.code || w.Param != "amount" || w.Message != "why it was refused" {
			t.Errorf("kind %d renders %+v; want %d %s %q", tt.kind, w, tt.status, tt.typ, tt.code)
		}
		if got := e.words(); got != tt.sessionWords {
			t.Errorf("kind %d is recorded as %q, want %q", tt.kind, got, tt.sessionWords)
		}
		var body struct{ Error map[string]string }
		if err := json.Unmarshal(e.body(), &body); err != nil || body.Error["type"] != tt.typ || body.Error["message"] != "why it was refused" || !strings.HasSuffix(string(e.body()), "}\n") {
			t.Errorf("kind %d's body %s", tt.kind, e.body())
		}
	}
	if (*refusal)(nil).words() != "" {
		t.Error("no refusal is recorded with words")
	}
}
