package export

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// marshalWhole is the session as one json encoding of the document, as
// MarshalSession wrote it before it streamed: what WriteSession must
// write, byte for byte.
func marshalWhole(t *testing.T, s *Session) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sessionDocument{Schema: SessionSchemaID, Session: s}); err != nil {
		t.Fatal(err)
	}
	return termtext.EscapeHidden(buf.Bytes())
}

// WriteSession writes what one encoding of the whole session writes, for
// sessions empty and full, with hidden characters and HTML in them.
func TestWriteSessionIsTheWholeEncoding(t *testing.T) {
	m := &missions.Mission{ID: "m<1>", Title: "t", Intents: []missions.Intent{{ID: "a\u200bb", Op: "refund"}}}
	resp := ledger.Response{Code: 200, Object: 1, Status: ledger.Succeeded}
	full := &Session{
		Started: "2026-12-01T00:00:00Z", Mission: m,
		Settings: SessionSettings{Contract: ledger.V1, Retention: 5, TickMillis: 1000, IntentField: "metadata[intent]", Faults: []missions.Fixture{missions.Success}},
		Requests: []SessionRequest{
			{Seq: 1, Kind: RequestCreate, Intent: "a\u200bb", Key: "k&<>", Payload: "x=1", Fixture: missions.Success, Provider: "committed", Response: &resp, Wire: WireDelivered, Status: 200,
				Shown: []missions.EvidenceObject{{Object: 1, Status: ledger.Succeeded}}},
			{Seq: 2, Kind: RequestRetrieve, Payload: "re_x\x1b", Wire: WireDelivered, Status: 404, Error: "invalid_request_error/resource_missing", Cut: true},
		},
		Changes: []SessionChange{{Tick: 3, Kind: ledger.Pruned, Key: "k&<>"}},
		Tick:    4, Settled: true,
		Ledger: ledger.Snapshot{Tick: 4, Effects: 1, Objects: []ledger.Object{{ID: 1, Intent: "a", Payload: "p", Status: ledger.Succeeded}},
			Records:  []ledger.Record{{Key: "k", Digest: "d", State: ledger.RecordSaved, Response: resp, ExpiresAt: 9}},
			InFlight: []ledger.InFlight{{At: 7, Request: ledger.Request{Intent: "b"}}}},
		Outcome: missions.Outcome{Effects: 1, Intended: 1, Verdicts: []missions.IntentVerdict{{Intent: "a", Verdict: missions.ExactlyOnce}}},
	}
	empty := &Session{Settings: SessionSettings{IntentField: "metadata[intent]"}, Requests: []SessionRequest{}, Changes: []SessionChange{}}
	nilSlices := &Session{}
	for name, s := range map[string]*Session{"full": full, "empty": empty, "nil slices": nilSlices} {
		var got bytes.Buffer
		if err := WriteSession(&got, s); err != nil {
			t.Fatal(err)
		}
		if want := marshalWhole(t, s); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: WriteSession wrote\n%s\nwant\n%s", name, got.Bytes(), want)
		}
	}
}
