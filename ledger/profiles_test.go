package ledger

// The first three contracts as profiles, for the tests inside the
// package, which cannot read the built-in YAML (the providers package
// stands on this one). providers' tests hold the built-ins to these.

var (
	testRefundLimit = Refusal{Status: 400, Code: "charge_already_refunded"}
	testV1          = &Profile{ID: "stripe-v1", Title: "Stripe", Summary: "v1", Docs: []string{"d"},
		Key: KeyRule{Header: "Idempotency-Key", MaxLength: 255}, Retention: 86400, Saves: SavesAll, Replay: ReplaySaved,
		Mismatch:    &Refusal{Status: 400, Code: "idempotency_error"},
		InFlight:    &Refusal{Status: 409, Code: "idempotency_key_in_use"},
		RefundLimit: testRefundLimit}
	testV2 = func() *Profile {
		p := *testV1
		p.ID, p.Replay, p.Retention = "stripe-v2", ReplayComplete, 30*86400
		return &p
	}()
	testNone = &Profile{ID: "none", Title: "None", Summary: "none", Docs: []string{"d"},
		Key: KeyRule{Header: "Idempotency-Key", MaxLength: 255}, Saves: SavesNone, Replay: ReplaySaved, RefundLimit: testRefundLimit}
	testProfiles = []*Profile{testV1, testV2, testNone}
)
