package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/replaylab/replaylab/missions"
)

// damageTrials are the counts of TestDamagedFilesAreRefusedOrUnchanged:
// every single-bit flip of both meta pages, random bit flips anywhere,
// flips in the element headers of branch and leaf pages, and cuts.
var damageTrials = struct{ random, headers, cuts int }{2000, 200, 50}

// TestDamagedFilesAreRefusedOrUnchanged: a --db file damaged one bit at
// a time, or cut short, either opens with the very data it held or is
// refused as damaged, with a message that says how to start anew. Never
// a crash (a fault reading the mapped file would end this test's
// process), never a state changed without a word.
func TestDamagedFilesAreRefusedOrUnchanged(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	clock := newFakeClock()
	faults := []missions.Fixture{missions.Success, missions.TimeoutAfterCommit, missions.FailureBeforeCommit, missions.ServerErrorAfterCommit}
	g, _ := openRig(t, Options{Faults: faults}, good, clock)
	for i := range 40 {
		form := url.Values{"charge": {"ch_" + strconv.Itoa(i)}, "amount": {strconv.Itoa(100 + i)}, "metadata[intent]": {fmt.Sprintf("intent-%04d", i)}}
		g.do(g.quick, http.MethodPost, "/v1/refunds", "key-"+strconv.Itoa(i%30), form)
	}
	g.do(g.quick, http.MethodGet, "/v1/refunds?limit=3", "", nil)
	g.stop()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	// open opens a copy of b and says what it holds, or that it was
	// refused.
	n := 0
	open := func(b []byte) (state string, refused error) {
		n++
		path := filepath.Join(dir, fmt.Sprintf("trial-%d.db", n))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		srv, _, err := Open(Options{Now: clock.Now}, path)
		if err != nil {
			return "", err
		}
		defer srv.Close()
		s, _ := json.Marshal(srv.Session())
		return string(s), nil
	}
	want, err := open(data)
	if err != nil {
		t.Fatalf("the undamaged file: %v", err)
	}

	type tally struct{ same, refused, changed int }
	var changed []string
	judge := func(kind string, tl *tally, b []byte, what string) {
		got, err := open(b)
		switch {
		case err != nil:
			if !errors.Is(err, ErrDamaged) && !bytes.Contains([]byte(err.Error()), []byte("start anew")) {
				// Refused, but not as damage: say what it was taken for.
				t.Errorf("%s %s: refused, but not as damage: %v", kind, what, err)
			}
			tl.refused++
		case got == want:
			tl.same++
		default:
			tl.changed++
			changed = append(changed, kind+" "+what)
		}
	}
	flip := func(off, bit int) []byte {
		b := bytes.Clone(data)
		b[off] ^= 1 << bit
		return b
	}
	// REPLAYLAB_DAMAGE_SEED draws other trials, to look further.
	seed, _ := strconv.ParseUint(os.Getenv("REPLAYLAB_DAMAGE_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(33+seed, 1))
	pageSize := int(binary.LittleEndian.Uint32(data[16+8:]))

	var meta, random, headers, cuts tally
	for _, page := range []int{0, pageSize} {
		for off := page; off < page+80; off++ {
			for bit := range 8 {
				judge("meta flip", &meta, flip(off, bit), fmt.Sprintf("byte %d bit %d", off, bit))
			}
		}
	}
	for range damageTrials.random {
		off, bit := rng.IntN(len(data)), rng.IntN(8)
		judge("random flip", &random, flip(off, bit), fmt.Sprintf("byte %d bit %d", off, bit))
	}
	// The element headers of branch (flag 0x01) and leaf (0x02) pages:
	// 16 bytes each after the 16-byte page header.
	var elems []int
	for p := 2 * pageSize; p+16 <= len(data); p += pageSize {
		flags, count := binary.LittleEndian.Uint16(data[p+8:]), int(binary.LittleEndian.Uint16(data[p+10:]))
		if flags&0x03 == 0 {
			continue
		}
		for i := range count {
			for j := range 16 {
				if off := p + 16 + 16*i + j; off < len(data) {
					elems = append(elems, off)
				}
			}
		}
	}
	if len(elems) == 0 {
		t.Fatal("found no branch or leaf page")
	}
	for range damageTrials.headers {
		off, bit := elems[rng.IntN(len(elems))], rng.IntN(8)
		judge("header flip", &headers, flip(off, bit), fmt.Sprintf("byte %d bit %d", off, bit))
	}
	for range damageTrials.cuts {
		at := rng.IntN(len(data))
		judge("cut", &cuts, data[:at], fmt.Sprintf("at byte %d", at))
	}
	for _, c := range []struct {
		name string
		tl   tally
	}{{"meta-page flips", meta}, {"random flips", random}, {"element-header flips", headers}, {"cuts", cuts}} {
		t.Logf("%-21s %5d trials: %5d open with the same data, %5d refused, %d changed", c.name, c.tl.same+c.tl.refused+c.tl.changed, c.tl.same, c.tl.refused, c.tl.changed)
	}
	if len(changed) > 0 {
		t.Errorf("%d damaged files opened with other data, without a word: %v", len(changed), changed[:min(len(changed), 20)])
	}
	if meta.same+meta.refused != 1280 {
		t.Errorf("%d meta-page trials, want 1280", meta.same+meta.refused+meta.changed)
	}
}

// TestLogEntriesAreSealed: a log entry changed in place, even into other
// valid JSON that touches no refund or key, is refused by its checksum,
// and names the entry; a database made before values were sealed still
// opens.
func TestLogEntriesAreSealed(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	made := func(name string) string {
		path := filepath.Join(dir, name)
		g, _ := openRig(t, Options{}, path, clock)
		g.create("k1")
		g.create("k2")
		g.stop()
		return path
	}
	edit := func(path string, change func(k, v []byte) []byte) {
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error {
			for _, name := range [][]byte{[]byte("meta"), []byte("log")} { // the file's buckets
				b := tx.Bucket(name)
				kv := map[string][]byte{}
				_ = b.ForEach(func(k, v []byte) error { kv[string(k)] = bytes.Clone(v); return nil })
				for k, v := range kv {
					if nv := change([]byte(k), v); nv != nil {
						if err := b.Put([]byte(k), nv); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// A word changed inside an entry, its checksum left as it was.
	renamed := made("renamed.db")
	edit(renamed, func(k, v []byte) []byte {
		if i := bytes.Index(v, []byte(`"delivered"`)); i > 0 {
			return append(append(bytes.Clone(v[:i]), []byte(`"de,ivered"`)...), v[i+11:]...)
		}
		return nil
	})
	if _, _, err := Open(Options{}, renamed); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "log entry 1 is damaged: its bytes do not match their checksum") {
		t.Errorf("an entry changed in place: %v", err)
	}
	// A plain entry among sealed ones.
	mixed := made("mixed.db")
	edit(mixed, func(k, v []byte) []byte {
		if len(k) == 8 && binary.BigEndian.Uint64(k) == 1 {
			return bytes.Clone(v[5:])
		}
		return nil
	})
	if _, _, err := Open(Options{}, mixed); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "not sealed") {
		t.Errorf("a plain entry among sealed ones: %v", err)
	}
	// Every value plain, as a database made before sealing keeps them.
	legacy := made("legacy.db")
	edit(legacy, func(k, v []byte) []byte { return bytes.Clone(v[5:]) })
	srv, rec, err := Open(Options{}, legacy)
	if err != nil || rec == nil || rec.Refunds != 2 {
		t.Fatalf("a database made before values were sealed: %+v, %v", rec, err)
	}
	srv.Close()
}

// TestABusyDatabaseIsInUseNotDamaged: a --db another serve holds is
// refused as in use, however busy it is writing: what a second opener
// reads of a file being written is no damage.
func TestABusyDatabaseIsInUseNotDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	g, _ := openRig(t, Options{}, path, newFakeClock())
	done := make(chan struct{})
	go func() {
		defer close(done)
		note := strings.Repeat("n", 500)
		for i := range 1500 {
			form := url.Values{"charge": {"ch_1"}, "amount": {"100"}, "metadata[intent]": {"i" + strconv.Itoa(i)}}
			for j := range 8 {
				form.Set(fmt.Sprintf("metadata[note%d]", j), note)
			}
			g.do(g.quick, http.MethodPost, "/v1/refunds", "k"+strconv.Itoa(i), form)
		}
	}()
	for range 40 {
		_, _, err := Open(Options{}, path)
		if !errors.Is(err, ErrInUse) || errors.Is(err, ErrDamaged) {
			t.Fatalf("a database in use: %v", err)
		}
	}
	<-done
}
