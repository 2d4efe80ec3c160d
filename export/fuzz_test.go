package export_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// FuzzUnmarshal feeds the case reader arbitrary bytes, seeded with catalog
// exports whole, truncated and mutated. It must never panic; a case it
// accepts must write back to bytes it reads again unchanged, and must run.
//
//	go test -run=^$ -fuzz=^FuzzUnmarshal$ -fuzztime=30s ./export/
func FuzzUnmarshal(f *testing.F) {
	for i, m := range missions.BuiltIn().Missions {
		if i >= 4 {
			break
		}
		c, err := missions.Run(m, m.Settings(missions.Overrides{}))
		if err != nil {
			f.Fatal(err)
		}
		data, err := export.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add(bytes.Replace(data, []byte(`"effects": `), []byte(`"effects": -`), 1))
		f.Add(bytes.Replace(data, []byte(`"fixture": "`), []byte(`"fixture": "x`), 1))
		f.Add(bytes.Replace(data, []byte(`"wait"`), []byte(`"wait": 9999, "w"`), 1))
		f.Add(bytes.Replace(data, []byte(`"seed": `), []byte(`"colour": [{"x": 1}], "seed": `), 1))
		f.Add(append([]byte{0xEF, 0xBB, 0xBF}, data...))
	}
	f.Add([]byte(`{"schema": "replaylab.case/v1"}`))
	f.Add([]byte(`{"schema": "replaylab.case/v2"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"schema":"replaylab.case/v3","x":` + strings.Repeat("[", 10001)))
	f.Add([]byte(`{"schema":"replaylab.case/v3","ledger":{"tick":1e999999999}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The schema walk is the first reader: its idea of JSON syntax
		// must be the standard's.
		if _, syntax, err := export.ScanCaseForTest(data); err != nil || syntax != !json.Valid(data) {
			t.Fatalf("the walk says syntax error=%v (%v), encoding/json says valid=%v", syntax, err, json.Valid(data))
		}
		c, err := export.Unmarshal("fuzz.json", data)
		if err != nil {
			if c != nil {
				t.Fatalf("Unmarshal returned a case and an error: %v", err)
			}
			return
		}
		out, err := export.Marshal(c)
		if err != nil {
			t.Fatalf("an accepted case does not marshal: %v", err)
		}
		back, err := export.Unmarshal("again.json", out)
		if err != nil {
			t.Fatalf("a marshalled case is not read back: %v", err)
		}
		again, _ := export.Marshal(back)
		if !bytes.Equal(out, again) {
			t.Fatalf("the round trip is not stable:\n%s\n---\n%s", out, again)
		}
		if cheapCase(c) {
			if _, err := missions.Run(&c.Mission, c.Settings); err != nil {
				t.Fatalf("an accepted case does not run: %v", err)
			}
		}
	})
}

func cheapCase(c *missions.Case) bool {
	ticks := 0
	var add func(steps []missions.Step)
	add = func(steps []missions.Step) {
		for _, st := range steps {
			ticks += st.Wait + st.Delay + 1
			add(st.Together)
		}
	}
	add(c.Mission.Schedule)
	return ticks < 2000 && len(c.Mission.Schedule) < 200
}

// FuzzUnmarshalSession: no input panics the session reader, and a session
// it accepts writes back to bytes it reads again as the same.
func FuzzUnmarshalSession(f *testing.F) {
	f.Add([]byte(`{"schema":"replaylab.session/v1","settings":{"contract":"v1","retention":10,"tick_ms":1000,"intent_field":"metadata[intent]"},"requests":[],"changes":[],"settled":true,"ledger":{"tick":0,"effects":0,"objects":[],"records":[]},"outcome":{"effects":0,"intended":0,"succeeded":0,"verdicts":[]}}`))
	f.Add([]byte(`{"schema":"replaylab.session/v1","requests":[{"seq":1,"kind":"create","wire":"held"}]}`))
	f.Add([]byte(`{"schema":"replaylab.case/v2"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := export.UnmarshalSession("fuzz.json", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		out, err := export.MarshalSession(s)
		if err != nil {
			t.Fatal(err)
		}
		again, err := export.UnmarshalSession("again.json", out)
		if err != nil {
			t.Fatalf("a session written back does not read: %v\n%s", err, out)
		}
		out2, _ := export.MarshalSession(again)
		if string(out) != string(out2) {
			t.Fatalf("writing a session twice differs:\n%s\n%s", out, out2)
		}
		_ = s.AsCase()
	})
}
