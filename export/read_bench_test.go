package export_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// Reading the largest case a mission file allows beside decoding the same
// JSON into the case struct, in one run:
//
//	go test -run=^$ -bench=ReadCase -benchmem ./export/
//
// Issue 12's goal: reading costs at most 1.5× the plain decode.

// bigCase runs a mission of missions.MaxSteps attempt steps over ten
// intents, the test matrix's faults in turn, with fresh keys: most steps
// send and most sends commit, so every part of the case is large.
func bigCase(tb testing.TB) []byte {
	tb.Helper()
	m := &missions.Mission{ID: "big", Title: "Big", Goal: "Many steps.", Contract: ledger.V1, Retention: 100, KeySource: missions.KeyPerIntent}
	for i := range 10 {
		m.Intents = append(m.Intents, missions.Intent{ID: fmt.Sprintf("r%d", i), Op: "refund", Principal: "agent", Payload: map[string]string{"order": fmt.Sprint(i), "amount": "45.00"}})
	}
	var faults []missions.Fixture
	for _, f := range missions.Fixtures {
		if f != missions.Success {
			faults = append(faults, f)
		}
	}
	for i := range missions.MaxSteps {
		f := faults[(i/10)%len(faults)]
		st := missions.Step{Attempt: m.Intents[i%10].ID, Fixture: f}
		switch f {
		case missions.LateCommit:
			st.Delay = 3
		case missions.PendingFixture:
			st.Delay, st.Resolve = 3, ledger.Succeeded
		}
		m.Schedule = append(m.Schedule, st)
	}
	off := false
	c, err := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &off}))
	if err != nil {
		tb.Fatal(err)
	}
	data, err := export.Marshal(c)
	if err != nil {
		tb.Fatal(err)
	}
	if len(data) > export.MaxCaseBytes {
		tb.Fatalf("the case is %d bytes, over the limit", len(data))
	}
	return data
}

func BenchmarkReadCase(b *testing.B) {
	data := bigCase(b)
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			doc := struct {
				Schema string `json:"schema"`
				*missions.Case
			}{Case: &missions.Case{}}
			if err := json.Unmarshal(data, &doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := export.Unmarshal("big.json", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkScanCase(b *testing.B) {
	data := bigCase(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := export.ScanCaseForTest(data); err != nil {
			b.Fatal(err)
		}
	}
}
