package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// The buckets of a provider's database.
var (
	// bucketMeta holds the settings the database was made with and the
	// wall-clock time its tick 0 fell on.
	bucketMeta = []byte("meta")
	// bucketLog holds what the provider took, in order, keyed by a
	// big-endian sequence number: each request as recorded when its
	// effect was decided, clock moves of the control endpoint, and
	// corrections of what became of a reply. Replaying it through a fresh
	// ledger gives the provider's state: the ledger stays pure, and this
	// log is the driver's storage, as raft's log is.
	bucketLog = []byte("log")
	// bucketRefunds holds every refund as it stands (id → object JSON),
	// and bucketKeys every live idempotency record (key → record JSON).
	// Both are written in the same transaction as the log entry that
	// changed them, so the record of a key and its effect are one ACID
	// write; a check of the durable outcome reads them alone.
	bucketRefunds = []byte("refunds")
	bucketKeys    = []byte("keys")
)

var metaKey = []byte("settings")

// A sealed value is the settings or a log entry as the database keeps
// it: sealMark, then a CRC-32C (Castagnoli) of the bucket key and the
// JSON, big-endian, then the JSON. A flipped bit anywhere in it, or in
// its key, fails the check when the file is opened. A value that starts
// with '{' is of a database made before values were sealed, read as it
// is, and only in such a database.
const sealMark = 0x01

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// seal is raw (JSON) sealed under key.
func seal(key, raw []byte) []byte {
	out := make([]byte, 5, 5+len(raw))
	out[0] = sealMark
	h := crc32.New(castagnoli)
	h.Write(key)
	h.Write(raw)
	binary.BigEndian.PutUint32(out[1:], h.Sum32())
	return append(out, raw...)
}

// unseal is the JSON of v, a value kept under key: sealed says whether it
// was sealed, and err what is wrong with a value that is neither sealed
// and intact nor plain JSON.
func unseal(key, v []byte) (raw []byte, sealed bool, err error) {
	switch {
	case len(v) > 0 && v[0] == '{':
		return v, false, nil
	case len(v) < 5 || v[0] != sealMark:
		return nil, false, errors.New("it is neither a sealed value nor JSON")
	}
	h := crc32.New(castagnoli)
	h.Write(key)
	h.Write(v[5:])
	if h.Sum32() != binary.BigEndian.Uint32(v[1:]) {
		return nil, true, errors.New("its bytes do not match their checksum")
	}
	return v[5:], true, nil
}

// storeMeta is what the database was made with.
type storeMeta struct {
	Settings export.SessionSettings `json:"settings"`
	Mission  *missions.Mission      `json:"mission,omitempty"`
	// Start is the wall-clock time of tick 0, in Unix nanoseconds.
	Start int64 `json:"start"`
}

// logEntry is one entry of the log.
type logEntry struct {
	Request *export.SessionRequest `json:"request,omitempty"`
	// Advance is a move of the clock by the control endpoint, in ticks.
	Advance int `json:"advance,omitempty"`
	// Tick is the tick the clock stood at when the entry was written: the
	// refunds and keys written with it are as the ledger held them then.
	Tick int `json:"tick,omitempty"`
	// Confirmed lists the requests (by seq) whose replies were written
	// since the entry before. A reply not confirmed when the process
	// died is taken as never delivered.
	Confirmed []int `json:"confirmed,omitempty"`
	// Cancel is an MCP client's cancellation of the tool call that
	// carried request Seq.
	Cancel *cancelEntry `json:"cancel,omitempty"`
	// Held is how the held reply of request Seq ended.
	Held *heldEntry `json:"held,omitempty"`
	// Again is one more request alike request Again (its seq), counted
	// on it (SessionRequest.Again).
	Again int `json:"again,omitempty"`
}

// heldEntry is how request Seq's held reply ended.
type heldEntry struct {
	Seq int `json:"seq"`
	export.HeldEnd
}

// cancelEntry is a cancellation of request Seq's tool call.
type cancelEntry struct {
	Seq int `json:"seq"`
	export.Cancellation
}

// store is the durable driver around a core.
type store struct {
	db   *bolt.DB
	path string
	seq  uint64
	// fail is called at the known boundaries of a write (before-commit,
	// after-commit) and after a reply (after-reply); the kill test ends
	// the process there.
	fail func(point string)
}

// ErrInUse is the error for a database another process holds open.
var ErrInUse = errors.New("the database is open in another process")

// ErrDamaged is what a damaged database is refused with.
var ErrDamaged = errors.New("the file is damaged")

// startAnew is how every refusal of a damaged file ends: what to do
// without losing it.
const startAnew = "serve did not change it: keep it as it is for a look (or restore it from a copy), and start anew with --db naming a new file"

// damaged is the refusal of a damaged file, saying what is wrong.
func damaged(what string) error {
	return fmt.Errorf("%w: %s; %s", ErrDamaged, what, startAnew)
}

// openStore opens (or makes) the database at path. Only one process may
// hold it: bbolt locks the file, and a second opener is told so. A fault
// while reading the mapped file (a damaged page that points outside it)
// is a panic here, not the end of the process, and is refused as damage.
func openStore(path string) (*store, error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if err := preflight(path); err != nil {
		return nil, fmt.Errorf("--db %s: %w", path, err)
	}
	db, err := openBolt(path)
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("--db %s: %w (another replaylab serve?); stop that one, or give another file", path, ErrInUse)
	case err != nil:
		return nil, fmt.Errorf("--db %s: %w (give a database serve made, or a new file)", path, err)
	}
	if err := checkFile(db, path); err != nil {
		db.Close()
		return nil, fmt.Errorf("--db %s: %w", path, err)
	}
	return &store{db: db, path: path, fail: func(string) {}}, nil
}

// openBolt opens the file, turning bbolt's panic on a page it cannot read
// into an error.
func openBolt(path string) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, damaged(fmt.Sprint(r))
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: 250 * time.Millisecond})
}

// preflight reads the two meta pages of an existing bbolt file, as bbolt
// lays them out (a 16-byte page header, then magic, version, page size,
// flags, root, freelist, the page count at byte 56, the transaction id at
// 64 and a checksum of all that at 72), before bbolt opens it:
//   - an empty file is refused like any cut file: only a missing file is
//     new, so a database emptied by accident never starts over quietly;
//   - a meta page that does not check is refused, unless it is plainly
//     the older of the two: bbolt would open the other one, an older
//     transaction, and drop what the newest write committed without a
//     word, acknowledged refunds included;
//   - a file shorter than the pages its meta promises is refused: bbolt
//     maps the file, and reading past its end would end the process.
func preflight(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // missing: bbolt makes it, or says why it cannot
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	// A serve that holds the file is writing it: what is read here could
	// be half of its next transaction, and no damage. bbolt locks the
	// file (flock); a shared lock that cannot be had says so.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("%w (another replaylab serve?); stop that one, or give another file", ErrInUse)
	} else if err == nil {
		defer func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }()
	}
	if info.Size() == 0 {
		return fmt.Errorf("%w: it is empty (0 bytes), a database cut to nothing, not a new one; %s", ErrDamaged, startAnew)
	}
	head := make([]byte, 128<<10)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	m0, _ := readMeta(head, 0)
	size := int(m0.pageSize)
	if !m0.valid || size < 512 || size > 64<<10 {
		// The first page's own size may be what is damaged: look for
		// the second page where bbolt's usual sizes put it.
		size = 0
		for _, guess := range []int{os.Getpagesize(), 4096, 16 << 10, 64 << 10} {
			if m1, _ := readMeta(head, guess); m1.valid {
				size = guess
				break
			}
		}
		switch {
		case size == 0 && !m0.magic:
			return errors.New("it is not a bbolt database, so not one serve made; give a new file")
		case size == 0:
			return damaged("neither of its two meta pages checks, so no transaction in it can be trusted")
		}
	}
	m1, present := readMeta(head, size)
	switch {
	case !present:
		return damaged(fmt.Sprintf("it is cut short: %d bytes, too short to hold its second meta page", info.Size()))
	case !m0.valid || !m1.valid:
		// Whatever a damaged page's transaction id says, it cannot be
		// trusted (a flipped bit can make the newest read as the older):
		// bbolt would open the other page, and could drop what the
		// newest write committed, acknowledged refunds included.
		good, bad := m1, m0
		if !m1.valid {
			good, bad = m0, m1
		}
		return damaged(fmt.Sprintf("its meta page %d (at byte %d) does not match its checksum, so which transaction is the newest cannot be told; bbolt would open meta page %d, transaction %d, and could drop what a later write committed",
			bad.page, bad.page*size, good.page, good.txid))
	}
	if pages := max(m0.pages, m1.pages); uint64(info.Size()) < pages*uint64(size) {
		return damaged(fmt.Sprintf("it is cut short: %d bytes, but its header promises %d", info.Size(), pages*uint64(size)))
	}
	newest := m0
	if m1.txid > m0.txid {
		newest = m1
	}
	if err := checkPages(f, info.Size(), newest); err != nil {
		return damaged(err.Error())
	}
	return nil
}

// boltMeta is what preflight reads of a bbolt meta page.
type boltMeta struct {
	page                        int
	pageSize                    uint32
	pages, txid, root, freelist uint64
	// magic: the page starts as bbolt's meta pages do; valid: and its
	// version is bbolt's and its checksum matches.
	magic, valid bool
}

// readMeta reads the meta page at byte off of head; present is false when
// head ends before it. Its checksum is FNV-1a over the fields before it.
func readMeta(head []byte, off int) (m boltMeta, present bool) {
	const magic, version = 0xED0CDAED, 2
	if off+80 > len(head) {
		return boltMeta{page: min(off, 1)}, false
	}
	b := head[off+16 : off+80]
	h := fnv.New64a()
	h.Write(b[:56])
	m = boltMeta{
		page:     min(off, 1),
		pageSize: binary.LittleEndian.Uint32(b[8:]),
		pages:    binary.LittleEndian.Uint64(b[40:]),
		root:     binary.LittleEndian.Uint64(b[16:]),
		freelist: binary.LittleEndian.Uint64(b[32:]),
		txid:     binary.LittleEndian.Uint64(b[48:]),
		magic:    binary.LittleEndian.Uint32(b) == magic,
	}
	m.valid = m.magic && binary.LittleEndian.Uint32(b[4:]) == version && binary.LittleEndian.Uint64(b[56:]) == h.Sum64()
	return m, true
}

// checkFile refuses a database that is cut short or damaged, before any
// of its pages is read for real (bbolt maps the file and would fault on a
// page past its end), and one that is another program's.
func checkFile(db *bolt.DB, path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = damaged(fmt.Sprint(r))
		}
	}()
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return db.View(func(tx *bolt.Tx) error {
		if info.Size() < tx.Size() {
			return damaged(fmt.Sprintf("it is cut short: %d bytes, but its own header says %d", info.Size(), tx.Size()))
		}
		// Every key and value read here first, where a fault is a panic
		// recovered (openStore): bbolt's own check runs on a goroutine
		// of its own, where a fault would end the process.
		if err := walk(tx); err != nil {
			return damaged(err.Error())
		}
		// The check's goroutine runs until it has sent every error: read
		// them all before the transaction closes.
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = damaged(err.Error())
			}
		}
		if first != nil {
			return first
		}
		var names []string
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, termtext.Escaped(string(name)))
			return nil
		})
		if len(names) == 0 {
			return nil // a new file
		}
		ours, missing := 0, []string{}
		for _, want := range [][]byte{bucketMeta, bucketLog, bucketRefunds, bucketKeys} {
			if tx.Bucket(want) == nil {
				missing = append(missing, string(want))
			} else {
				ours++
			}
		}
		switch {
		case ours == 0:
			return fmt.Errorf("it is not a replaylab serve database (its buckets are %s; serve's are meta, log, refunds and keys); give a new file", strings.Join(names, ", "))
		case len(missing) > 0:
			// Some of serve's buckets and not the rest: a name damaged.
			return damaged(fmt.Sprintf("it has no %s bucket (its buckets are %s; serve makes meta, log, refunds and keys)", strings.Join(missing, " or "), termtext.Shorten(strings.Join(names, ", "), 200)))
		}
		if tx.Bucket(bucketMeta).Get(metaKey) == nil {
			return damaged("it has serve's buckets but no settings, so its log cannot be replayed")
		}
		return nil
	})
}

// guarded turns a panic while reading the file (a fault in its mapped
// pages, bbolt's own panic on a page it cannot read) into its refusal.
func guarded(err *error) {
	if r := recover(); r != nil {
		*err = damaged(fmt.Sprint(r))
	}
}

// walk reads every key and value of every bucket of tx, nested ones
// too.
func walk(tx *bolt.Tx) error {
	var in func(b *bolt.Bucket, depth int) error
	in = func(b *bolt.Bucket, depth int) error {
		if depth > 8 {
			return errors.New("its buckets nest deeper than serve makes them")
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			touch(k)
			touch(v)
			if v == nil {
				if nb := b.Bucket(k); nb != nil {
					if err := in(nb, depth+1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return in(b, 0) })
}

// touched is a sum of bytes walk read, kept so that the reads are made.
var touchedSum byte

// touch reads every byte of b.
func touch(b []byte) {
	var x byte
	for _, c := range b {
		x ^= c
	}
	touchedSum ^= x
}

func (st *store) close() error { return st.db.Close() }

// load reads the meta and the log; meta is nil for a new database.
func (st *store) load() (meta *storeMeta, entries []logEntry, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guarded(&err)
	err = st.db.View(func(tx *bolt.Tx) error {
		sealed := false
		if b := tx.Bucket(bucketMeta); b != nil {
			if v := b.Get(metaKey); v != nil {
				raw, s, err := unseal(metaKey, v)
				if err != nil {
					return damaged(fmt.Sprintf("its settings are damaged: %v", err))
				}
				sealed = s
				meta = &storeMeta{}
				if err := json.Unmarshal(raw, meta); err != nil {
					return damaged(fmt.Sprintf("its settings do not read: %v", err))
				}
			}
		}
		b := tx.Bucket(bucketLog)
		if b == nil {
			return nil
		}
		var last uint64
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return damaged(fmt.Sprintf("a log entry's key is %d bytes, not 8", len(k)))
			}
			n := binary.BigEndian.Uint64(k)
			if n != last+1 {
				return damaged(fmt.Sprintf("its log goes from entry %d to entry %d", last, n))
			}
			last = n
			raw, s, err := unseal(k, v)
			switch {
			case err != nil:
				return damaged(fmt.Sprintf("log entry %d is damaged: %v", n, err))
			case sealed && !s:
				// A file made with sealed values has no plain ones.
				return damaged(fmt.Sprintf("log entry %d is damaged: it is not sealed, as every entry of this file is", n))
			}
			var e logEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				return damaged(fmt.Sprintf("log entry %d does not read: %v", n, err))
			}
			entries = append(entries, e)
			st.seq = n
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--db %s: %w", st.path, err)
	}
	return meta, entries, nil
}

// init writes the meta of a new database.
func (st *store) init(meta storeMeta) error {
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return st.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketLog, bucketRefunds, bucketKeys} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaKey, seal(metaKey, raw))
	})
}

// touched is what one step of the provider changed: the objects and the
// keys whose durable copies must be written with its log entry.
type touched struct {
	objects []ledger.ObjectID
	keys    []string
}

// write appends e to the log and writes the objects and keys it touched,
// as led now holds them, in one transaction, made durable (fsync) before
// it returns.
func (st *store) write(entry func() (logEntry, touched), led *ledger.Ledger) error {
	e, t := entry()
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	err = st.db.Update(func(tx *bolt.Tx) error {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], st.seq+1)
		if err := tx.Bucket(bucketLog).Put(k[:], seal(k[:], raw)); err != nil {
			return err
		}
		refunds, keys := tx.Bucket(bucketRefunds), tx.Bucket(bucketKeys)
		for _, id := range t.objects {
			o, ok := led.Object(id)
			if !ok {
				continue
			}
			v, err := json.Marshal(o)
			if err != nil {
				return err
			}
			if err := refunds.Put([]byte(id.String()), v); err != nil {
				return err
			}
		}
		for _, key := range t.keys {
			rec, ok := led.Record(key)
			if !ok {
				if err := keys.Delete([]byte(key)); err != nil {
					return err
				}
				continue
			}
			v, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := keys.Put([]byte(key), v); err != nil {
				return err
			}
		}
		st.fail("before-commit")
		return nil
	})
	if err != nil {
		return fmt.Errorf("--db %s: %w", st.path, err)
	}
	st.seq++
	st.fail("after-commit")
	return nil
}

// wipe empties the log, refunds and keys, keeping meta with a new start.
func (st *store) wipe(meta storeMeta) error {
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	err = st.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketLog, bucketRefunds, bucketKeys} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaKey, seal(metaKey, raw))
	})
	if err == nil {
		st.seq = 0
	}
	return err
}

// verify checks that the durable refunds and keys are what the ledger
// rebuilt from the log holds: they were written together, so a difference
// means the file was changed behind the provider's back.
func (st *store) verify(led *ledger.Ledger) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guarded(&err)
	snap := led.Snapshot()
	return st.db.View(func(tx *bolt.Tx) error {
		refunds, keys := tx.Bucket(bucketRefunds), tx.Bucket(bucketKeys)
		if n := refunds.Stats().KeyN; n != len(snap.Objects) {
			return fmt.Errorf("it holds %d refunds, but its log makes %d", n, len(snap.Objects))
		}
		for _, o := range snap.Objects {
			want, _ := json.Marshal(o)
			if got := refunds.Get([]byte(o.ID.String())); !bytes.Equal(got, want) {
				return fmt.Errorf("refund %s reads %s, but its log makes %s", o.ID, got, want)
			}
		}
		if n := keys.Stats().KeyN; n != len(snap.Records) {
			return fmt.Errorf("it holds %d idempotency keys, but its log makes %d", n, len(snap.Records))
		}
		for _, r := range snap.Records {
			want, _ := json.Marshal(r)
			if got := keys.Get([]byte(r.Key)); !bytes.Equal(got, want) {
				return fmt.Errorf("key %q reads %s, but its log makes %s", r.Key, got, want)
			}
		}
		return nil
	})
}

// Durable reads a provider database on its own, without serving: every
// refund and every live key as the last durable write left them. It is
// what a check of the durable outcome reads after a crash.
func Durable(path string) ([]ledger.Object, []ledger.Record, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 250 * time.Millisecond, ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	var objs []ledger.Object
	var recs []ledger.Record
	err = db.View(func(tx *bolt.Tx) error {
		refunds, keys := tx.Bucket(bucketRefunds), tx.Bucket(bucketKeys)
		if refunds == nil || keys == nil {
			return errors.New("not a replaylab serve database")
		}
		if err := refunds.ForEach(func(_, v []byte) error {
			var o ledger.Object
			if err := json.Unmarshal(v, &o); err != nil {
				return err
			}
			objs = append(objs, o)
			return nil
		}); err != nil {
			return err
		}
		return keys.ForEach(func(_, v []byte) error {
			var r ledger.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			recs = append(recs, r)
			return nil
		})
	})
	return objs, recs, err
}

// Recovered says what Open found in an existing database.
type Recovered struct {
	// Entries is how many log entries were replayed; Requests and
	// Refunds what they rebuilt.
	Entries, Requests, Refunds int
	// Unconfirmed counts replies the log holds no confirmation of: the
	// process died before it knew they were written, so they are taken
	// as never delivered.
	Unconfirmed int
	// InFlight counts late commits that were executing at the crash; they
	// commit at their due tick, as if the provider had kept running.
	InFlight int
}

// Open is New with the provider's state in the database at path: made if
// missing, recovered from its log if not. The database keeps the settings
// it was made with; other settings are refused, so that the log replays
// as it was written. Only one process may hold the database.
func Open(o Options, path string) (*Server, *Recovered, error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	st, err := openStore(path)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Server, *Recovered, error) {
		st.close()
		return nil, nil, err
	}
	meta, entries, err := st.load()
	if err != nil {
		return fail(err)
	}
	if meta != nil && len(o.Faults) == 0 && len(o.ReadFaults) == 0 && o.Mission == nil {
		// A restart that names no faults goes on with the database's:
		// its log says which are used up. What a listed fault does
		// (--delay, --resolve) comes with them, where left at its
		// default.
		o.Faults, o.ReadFaults, o.Mission = meta.Settings.Faults, meta.Settings.ReadFaults, meta.Mission
		if (o.Delay == 0 || o.Delay == DefaultDelay) && meta.Settings.Delay > 0 {
			o.Delay = meta.Settings.Delay
		}
		if (o.Resolve == 0 || o.Resolve == ledger.Succeeded) && meta.Settings.Resolve != 0 {
			o.Resolve = meta.Settings.Resolve
		}
	}
	s, err := New(o)
	if err != nil {
		return fail(err)
	}
	if meta != nil {
		// The payloads' form is the database's, whatever this serve
		// would write in a new one.
		s.c.session.Settings.PayloadUTF8 = meta.Settings.PayloadUTF8
	}
	want := storeMeta{Settings: s.c.session.Settings, Mission: s.opts.Mission, Start: s.start.UnixNano()}
	if meta == nil {
		if err := st.init(want); err != nil {
			return fail(fmt.Errorf("--db %s: %w", path, err))
		}
		s.st = st
		return s, nil, nil
	}
	if d := settingsDiff(meta, &want); d != "" {
		return fail(fmt.Errorf("--db %s was made with other settings: %s; start serve with the settings the database was made with, or give a new --db", path, d))
	}
	s.start = time.Unix(0, meta.Start)
	s.c.start = s.start
	s.c.session.Started = s.start.UTC().Format(time.RFC3339Nano)
	rec := &Recovered{Entries: len(entries)}
	confirmed := map[int]bool{}
	for _, e := range entries {
		for _, seq := range e.Confirmed {
			confirmed[seq] = true
		}
	}
	for _, e := range entries {
		switch {
		case e.Request != nil:
			r := *e.Request
			if r.Kind != export.RequestFaults && r.Wire == export.WireDelivered && !confirmed[r.Seq] {
				r.Wire = export.WireGone
				rec.Unconfirmed++
			}
			if err := s.c.apply(r); err != nil {
				return fail(fmt.Errorf("--db %s: replaying its log: %w", path, err))
			}
		case e.Again != 0:
			if !s.c.again(e.Again-1, 1) {
				return fail(fmt.Errorf("--db %s: %w", path, damaged(fmt.Sprintf("a log entry counts request %d again, which its log cannot count (only a read or a refused request that met no fault, before the next read fault)", e.Again))))
			}
		case e.Advance > 0:
			s.offset += e.Advance
		case e.Cancel != nil && e.Cancel.Seq >= 1 && e.Cancel.Seq <= s.c.reqs.len():
			if r := s.c.reqs.get(e.Cancel.Seq - 1); r.Call != nil {
				call := *r.Call
				call.Cancelled = &e.Cancel.Cancellation
				s.c.setCall(e.Cancel.Seq-1, &call)
			}
		case e.Held != nil && e.Held.Seq >= 1 && e.Held.Seq <= s.c.reqs.len():
			r := s.c.reqs.get(e.Held.Seq - 1)
			r.Held = &e.Held.HeldEnd
			s.c.reqs.set(e.Held.Seq-1, r)
		}
		// What the clock did up to the entry's tick was written with it.
		s.c.advanceTo(e.Tick)
	}
	// A hold whose end was never logged was cut short by the process
	// ending: it was still held when serve stopped.
	for i := range s.c.reqs.len() {
		if r := s.c.reqs.get(i); r.Wire == export.WireHeld && r.Held == nil {
			r.Held = &export.HeldEnd{How: export.HeldServeStopped, Tick: s.c.led.Now()}
			s.c.reqs.set(i, r)
		}
	}
	if err := st.verify(s.c.led); err != nil {
		if !errors.Is(err, ErrDamaged) {
			err = damaged("it does not agree with itself: " + err.Error())
		}
		return fail(fmt.Errorf("--db %s: %w", path, err))
	}
	// The lists' index is built now, not by the first list.
	s.c.index.sync(s.c.led)
	rec.Requests, rec.Refunds = s.c.reqs.len(), s.c.led.Objects()
	rec.InFlight = len(s.c.led.View().InFlight)
	s.st = st
	s.persisted = s.mark()
	return s, rec, nil
}

// settingsDiff names the settings that differ between the database's and
// the ones serve was started with, or is "" when they match.
func settingsDiff(made, now *storeMeta) string {
	a, b := made.Settings, now.Settings
	var d []string
	add := func(what, x, y string) {
		if x != y {
			d = append(d, fmt.Sprintf("%s %s, not %s", what, orNothing(x), orNothing(y)))
		}
	}
	tick := func(s export.SessionSettings) time.Duration { return time.Duration(s.TickMillis) * time.Millisecond }
	add("--contract", string(a.Contract), string(b.Contract))
	add("--tick", tick(a).String(), tick(b).String())
	add("--retention", (time.Duration(a.Retention) * tick(a)).String(), (time.Duration(b.Retention) * tick(b)).String())
	add("--faults", faultWords(a.Faults)+readFaultWords(a.Faults, a.ReadFaults), faultWords(b.Faults)+readFaultWords(b.Faults, b.ReadFaults))
	add("--compare-metadata", strconv.FormatBool(a.MetadataInDigest), strconv.FormatBool(b.MetadataInDigest))
	add("--delay", fmt.Sprint(a.Delay), fmt.Sprint(b.Delay))
	add("--resolve", a.Resolve.String(), b.Resolve.String())
	add("--intent-field", a.IntentField, b.IntentField)
	add("--mission", missionID(made.Mission), missionID(now.Mission))
	if made.Mission != nil && now.Mission != nil && made.Mission.ID == now.Mission.ID && made.Mission.Digest() != now.Mission.Digest() {
		d = append(d, fmt.Sprintf("mission %s has changed since the database was made (its file was edited)", made.Mission.ID))
	}
	return strings.Join(d, "; ")
}

// faultWords is a fault list as --faults takes it: a,b,c.
func faultWords(fs []missions.Fixture) string {
	w := make([]string, len(fs))
	for i, f := range fs {
		w[i] = string(f)
	}
	return strings.Join(w, ",")
}

// readFaultWords is a read fault list as --faults takes it, after the
// creates' faults (a comma between them when both are there), with the
// lag a read_lagging took: ",read_ok,read_lagging --lag 5"; "" for none.
func readFaultWords(creates []missions.Fixture, rs []missions.ReadStep) string {
	var w []string
	lag := 0
	for _, r := range rs {
		w = append(w, string(r.Fault))
		lag = max(lag, r.Lag)
	}
	out := strings.Join(w, ",")
	if out != "" && len(creates) > 0 {
		out = "," + out
	}
	if lag > 0 {
		out += fmt.Sprintf(" --lag %d", lag)
	}
	return out
}

func orNothing(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func missionID(m *missions.Mission) string {
	if m == nil {
		return ""
	}
	return m.ID
}

// SetFailpoint makes the durable store call fail at its known boundaries:
// "before-commit" (inside the transaction, before it commits),
// "after-commit" (durable, before the reply) and "after-reply". It is for
// tests that end the process there; a provider in memory has none.
func (s *Server) SetFailpoint(fail func(point string)) { s.st.setFailpoint(fail) }

func (st *store) failpoint(point string)         { st.fail(point) }
func (st *store) setFailpoint(fail func(string)) { st.fail = fail }
