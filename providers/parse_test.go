package providers_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
)

// A profile that parses: each bad-input row below changes one line of it.
const good = `id: mine
title: My provider
summary: Keeps every answer.
docs:
  - https://example.com/idempotency
key:
  header: Idempotency-Key
  max_length: 64
  required: false
retention: 24h
saves: all
replay: saved
failed_key: reusable
mismatch: {status: 400, code: key_reused}
in_flight: {status: 409, code: in_progress, retry_after: 2}
refund_limit: {status: 400, code: over_refund}
`

func TestParseGood(t *testing.T) {
	p, err := providers.Parse("mine.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "mine" || p.Retention != 86400 || p.Saves != ledger.SavesAll || p.InFlight.RetryAfter != 2 || p.Mismatch.Code != "key_reused" || p.FailedKey != nil {
		t.Fatalf("read %+v", p)
	}
}

// Every mistake is named with its line and what would be accepted.
func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		name, from, to, want string
	}{
		{"missing field", "replay: saved\n", "", "mine.yaml:1: missing replay"},
		{"unknown field", "replay: saved\n", "replay: saved\nreplays: 3\n", `mine.yaml:13: unknown key "replays" in the profile (accepted: id, title`},
		{"negative retention", "retention: 24h", "retention: -24h", `mine.yaml:10: retention "-24h": expected a whole number and a unit`},
		{"unitless retention", "retention: 24h", "retention: 24", `mine.yaml:10: retention 24 has no unit: write a whole number and a unit, s, m, h or d, such as 24h`},
		{"refusal status under 400", "mismatch: {status: 400,", "mismatch: {status: 200,", `mine.yaml:14: mismatch.status is "200"; it must be a whole number from 400 to 599`},
		{"refusal status over 599", "refund_limit: {status: 400,", "refund_limit: {status: 600,", `mine.yaml:16: refund_limit.status is "600"`},
		{"in-flight 2xx", "in_flight: {status: 409,", "in_flight: {status: 202,", `mine.yaml:15: in_flight.status is "202"; it must be a whole number from 400 to 599`},
		{"key length 0", "max_length: 64", "max_length: 0", `mine.yaml:8: key.max_length is "0"; it must be a whole number from 1 to 255`},
		{"unknown saves", "saves: all", "saves: everything", `mine.yaml:11: saves "everything" is not known (accepted: all, no_5xx, success, none)`},
		{"retry_after outside in_flight", "mismatch: {status: 400, code: key_reused}", "mismatch: {status: 400, code: key_reused, retry_after: 1}", `mine.yaml:14: unknown key "retry_after" in mismatch`},
		{"two refusals alike", "refund_limit: {status: 400, code: over_refund}", "refund_limit: {status: 400, code: key_reused}", "mine.yaml:16: refund_limit.code: 400 key_reused is also mismatch's refusal"},
		{"required key without its refusal", "required: false", "required: true", "mine.yaml:6: key.missing: a required key needs the refusal"},
		{"retention without a contract", "saves: all", "saves: none", "mine.yaml:10: retention: a profile that saves nothing keeps no key"},
		{"a bad failed_key word", "failed_key: reusable", "failed_key: final", `mine.yaml:13: failed_key "final" is not known (accepted: reusable)`},
		{"two documents", "refund_limit: {status: 400, code: over_refund}\n", "refund_limit: {status: 400, code: over_refund}\n---\nid: other\n", "a second YAML document"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.from) {
				t.Fatalf("the good profile has no %q", tt.from)
			}
			_, err := providers.Parse("mine.yaml", []byte(strings.Replace(good, tt.from, tt.to, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant it to say %q", err, tt.want)
			}
		})
	}
}

// The built-ins parse, answer to their short names, and come back the
// same through the JSON a case carries them in.
func TestBuiltins(t *testing.T) {
	ps := providers.Builtins()
	if len(ps) != 13 {
		t.Fatalf("%d built-in profiles, want 13", len(ps))
	}
	for _, p := range ps {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back ledger.Profile
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v\n%s", p.ID, err, b)
		}
		if !providers.Same(p, &back) || back.Validate() != nil {
			t.Errorf("%s: the JSON round trip changed the profile:\n%s", p.ID, b)
		}
		if len(p.Docs) == 0 {
			t.Errorf("%s names no page it was written from", p.ID)
		}
	}
	for short, id := range map[string]string{"v1": "stripe-v1", "v2": "stripe-v2", "none": "none"} {
		if p := providers.Builtin(short); p == nil || p.ID != id || string(providers.CaseName(p)) != short {
			t.Errorf("%s: %v", short, p)
		}
	}
	if string(providers.CaseName(providers.Builtin("checkout"))) != "checkout" {
		t.Error("checkout's case name")
	}
	if _, err := providers.Lookup("chekout"); err == nil || !strings.Contains(err.Error(), "did you mean checkout?") {
		t.Errorf("a misspelt name: %v", err)
	}
}

// The first three profiles keep the rules the contracts v1, v2 and none
// had before profiles were data: every case written then replays byte for
// byte (the ledger's reference and the goldens hold the behaviour; this
// holds the rules).
func TestShortNamesKeepTheirRules(t *testing.T) {
	v1, v2, none := providers.Builtin("v1"), providers.Builtin("v2"), providers.Builtin("none")
	if v1.Saves != ledger.SavesAll || v1.Replay != ledger.ReplaySaved || v1.FailedKey != nil || v1.Mismatch.Status != 400 || v1.InFlight.Status != 409 {
		t.Errorf("stripe-v1: %+v", v1)
	}
	if v2.Saves != ledger.SavesAll || v2.Replay != ledger.ReplayComplete || v2.Mismatch.Status != 400 || v2.InFlight.Status != 409 {
		t.Errorf("stripe-v2: %+v", v2)
	}
	if !none.Keyless() {
		t.Errorf("none keeps keys: %+v", none)
	}
}

// Every built-in file is in the order list, and every id in it has a file.
func TestBuiltinFilesAreListed(t *testing.T) {
	files, err := os.ReadDir("builtin")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(providers.Order) {
		t.Fatalf("%d files in builtin/, %d ids in Order", len(files), len(providers.Order))
	}
}
