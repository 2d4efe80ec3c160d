package export_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// asV1File renders a case the way version 1 of the format wrote it.
func asV1File(t *testing.T, c *missions.Case) []byte {
	t.Helper()
	b, err := export.Marshal(export.AsVersion(c, 1))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(b, []byte(`"schema": "`+export.SchemaID+`"`), []byte(`"schema": "`+export.SchemaV1+`"`), 1)
}

// TestCasesUnchangedFromV1: for every catalog mission under every one of
// the 24 settings, the case is byte for byte what the engine wrote before
// it was split into world, caller and words, once the fields version 2
// adds are set aside. testdata/v1-digests.txt holds that engine's digests.
// A mission added to the catalog since has none to compare with; every
// mission the file names must still be there, under every setting.
func TestCasesUnchangedFromV1(t *testing.T) {
	f, err := os.Open("testdata/v1-digests.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, recorded := map[string]string{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		want[line[:i]] = line[i+1:]
		recorded[strings.Fields(line)[0]] = true
	}
	n := 0
	for _, m := range missions.BuiltIn().Missions {
		if !recorded[m.ID] {
			continue // added after version 1
		}
		for _, stable := range []bool{true, false} {
			for _, p := range missions.Policies {
				for _, c := range missions.ShortContracts {
					for _, k := range missions.KeySources {
						o := missions.Overrides{StableKeys: &stable, Policy: &p, Contract: &c, KeySource: &k}
						name := m.ID + " " + o.String()
						cs, err := missions.Run(m, m.Settings(o))
						if err != nil {
							t.Fatal(err)
						}
						got := fmt.Sprintf("%x", sha256.Sum256(asV1File(t, cs)))
						if w, ok := want[name]; !ok {
							t.Errorf("%s: no recorded digest", name)
						} else if got != w {
							t.Errorf("%s: the case differs from what version 1 wrote", name)
						}
						n++
					}
				}
			}
		}
	}
	if n != len(want) {
		t.Errorf("checked %d cases; the file records %d", n, len(want))
	}
}

// TestV1CasesStillRead: a version 1 file is read as version 1, and a
// version 1 file carrying a field of version 2 is refused by name.
func TestV1CasesStillRead(t *testing.T) {
	m, _ := missions.BuiltIn().Get("refund-still-pending")
	g := missions.Guarded
	c, err := missions.Run(m, m.Settings(missions.Overrides{Policy: &g}))
	if err != nil {
		t.Fatal(err)
	}
	v1 := asV1File(t, c)
	back, err := export.Unmarshal("old.json", v1)
	if err != nil {
		t.Fatalf("reading a v1 case: %v", err)
	}
	if back.Version != 1 {
		t.Errorf("read as version %d, want 1", back.Version)
	}
	again, _ := export.Marshal(export.AsVersion(back, 1))
	if first, _ := export.Marshal(export.AsVersion(c, 1)); !bytes.Equal(again, first) {
		t.Error("a v1 case does not read back as itself")
	}
	v2, _ := export.Marshal(c)
	withBelief := bytes.Replace(v2, []byte(`"schema": "`+export.SchemaID+`"`), []byte(`"schema": "`+export.SchemaV1+`"`), 1)
	_, err = export.Unmarshal("mixed.json", withBelief)
	if err == nil || !strings.Contains(err.Error(), `has no "belief" field on its events`) {
		t.Errorf("a v1 case with beliefs: %v", err)
	}
}

// TestV1FieldsOfV2Refused: a version 1 file that carries any field of
// version 2, even an empty one, is refused at the field's line.
func TestV1FieldsOfV2Refused(t *testing.T) {
	m, _ := missions.BuiltIn().Get("timeout-then-success")
	c, err := missions.Run(m, m.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	v1 := asV1File(t, c)
	withEmpty := bytes.Replace(v1, []byte(`"records": [`), []byte(`"in_flight": [], "records": [`), 1)
	_, err = export.Unmarshal("old.json", withEmpty)
	if err == nil || !strings.Contains(err.Error(), `has no "in_flight" field`) || !strings.HasPrefix(err.Error(), "old.json:") {
		t.Errorf("a v1 case with an empty in_flight: %v", err)
	}
	quoted := bytes.Replace(v1, []byte(`"note": "the call is approved to run"`), []byte(`"note": "the \"partial\": is a word"`), 1)
	if bytes.Equal(quoted, v1) {
		t.Fatal("the edit changed nothing")
	}
	_, err = export.Unmarshal("old.json", quoted)
	if err != nil && strings.Contains(err.Error(), `has no "partial" field`) {
		t.Errorf("a note that quotes the word partial is not a field: %v", err)
	}
}

// A version 2 file, written as the build before version 3 wrote it (a
// mismatch answered 422), is read as version 2 and replays identical:
// the fresh run taken as version 2 gives the same bytes. Version 3 writes
// the same mismatch as Stripe's 400.
func TestV2FilesStillReplay(t *testing.T) {
	for _, m := range missions.BuiltIn().Missions {
		if m.Contract != ledger.V1 || len(m.Captured) > 0 {
			continue // a profile or a capture came with version 6: no version 2 file holds them
		}
		for _, p := range missions.Policies {
			o := missions.Overrides{Policy: &p}
			c, err := missions.Run(m, m.Settings(o))
			if err != nil {
				t.Fatal(err)
			}
			b, err := export.Marshal(export.AsVersion(c, 2))
			if err != nil {
				t.Fatal(err)
			}
			v2 := bytes.Replace(b, []byte(`"schema": "`+export.SchemaID+`"`), []byte(`"schema": "`+export.SchemaV2+`"`), 1)
			back, err := export.Unmarshal(m.ID+".v2.json", v2)
			if err != nil {
				t.Fatalf("%s %s: %v", m.ID, p, err)
			}
			if back.Version != 2 {
				t.Fatalf("%s: read as version %d", m.ID, back.Version)
			}
			again, _ := export.Marshal(export.AsVersion(c, back.Version))
			first, _ := export.Marshal(back)
			if !bytes.Equal(again, first) {
				t.Fatalf("%s %s: a v2 file does not replay as v2", m.ID, p)
			}
			if m.ID == "changed-parameters" {
				v3, _ := export.Marshal(c)
				if !bytes.Contains(v2, []byte(`"code": 422`)) || bytes.Contains(v3, []byte(`"code": 422`)) || !bytes.Contains(v3, []byte(`"provider": "mismatch",`)) {
					t.Errorf("%s %s: the mismatch is not 422 in v2 and 400 in v3", m.ID, p)
				}
			}
		}
	}
}
