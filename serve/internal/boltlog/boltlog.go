// Package boltlog is the provider's durable log in one bbolt file: the
// settings it was made with, the log of what it took (each value sealed
// with a checksum of its key and bytes), and beside them every refund and
// live idempotency key as the last entry left them, written in the same
// transaction as the entry that changed them, so that a key and its
// effect are one ACID write. It knows bytes, not what they mean: serve
// hands it JSON and reads JSON back, as etcd raft's WAL keeps entries it
// does not read.
package boltlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/replaylab/replaylab/internal/termtext"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
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
// ErrInUse is the error for a database another process holds open.
var ErrInUse = errors.New("the database is open in another process")

// ErrDamaged is what a damaged database is refused with.
var ErrDamaged = errors.New("the file is damaged")

// startAnew is how every refusal of a damaged file ends: what to do
// without losing it.
const startAnew = "serve did not change it: keep it as it is for a look (or restore it from a copy), and start anew with --db naming a new file"

// Damaged is the refusal of a damaged file, saying what is wrong.
func Damaged(what string) error {
	return fmt.Errorf("%w: %s; %s", ErrDamaged, what, startAnew)
}

// openBolt opens the file, turning bbolt's panic on a page it cannot read
// into an error.
func openBolt(path string) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, Damaged(fmt.Sprint(r))
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
			return Damaged("neither of its two meta pages checks, so no transaction in it can be trusted")
		}
	}
	m1, present := readMeta(head, size)
	switch {
	case !present:
		return Damaged(fmt.Sprintf("it is cut short: %d bytes, too short to hold its second meta page", info.Size()))
	case !m0.valid || !m1.valid:
		// Whatever a damaged page's transaction id says, it cannot be
		// trusted (a flipped bit can make the newest read as the older):
		// bbolt would open the other page, and could drop what the
		// newest write committed, acknowledged refunds included.
		good, bad := m1, m0
		if !m1.valid {
			good, bad = m0, m1
		}
		return Damaged(fmt.Sprintf("its meta page %d (at byte %d) does not match its checksum, so which transaction is the newest cannot be told; bbolt would open meta page %d, transaction %d, and could drop what a later write committed",
			bad.page, bad.page*size, good.page, good.txid))
	}
	if pages := max(m0.pages, m1.pages); uint64(info.Size()) < pages*uint64(size) {
		return Damaged(fmt.Sprintf("it is cut short: %d bytes, but its header promises %d", info.Size(), pages*uint64(size)))
	}
	newest := m0
	if m1.txid > m0.txid {
		newest = m1
	}
	if err := checkPages(f, info.Size(), newest); err != nil {
		return Damaged(err.Error())
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
			err = Damaged(fmt.Sprint(r))
		}
	}()
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return db.View(func(tx *bolt.Tx) error {
		if info.Size() < tx.Size() {
			return Damaged(fmt.Sprintf("it is cut short: %d bytes, but its own header says %d", info.Size(), tx.Size()))
		}
		// Every key and value read here first, where a fault is a panic
		// recovered (Open): bbolt's own check runs on a goroutine
		// of its own, where a fault would end the process.
		if err := walk(tx); err != nil {
			return Damaged(err.Error())
		}
		// The check's goroutine runs until it has sent every error: read
		// them all before the transaction closes.
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = Damaged(err.Error())
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
			return Damaged(fmt.Sprintf("it has no %s bucket (its buckets are %s; serve makes meta, log, refunds and keys)", strings.Join(missing, " or "), termtext.Shorten(strings.Join(names, ", "), 200)))
		}
		if tx.Bucket(bucketMeta).Get(metaKey) == nil {
			return Damaged("it has serve's buckets but no settings, so its log cannot be replayed")
		}
		return nil
	})
}

// guarded turns a panic while reading the file (a fault in its mapped
// pages, bbolt's own panic on a page it cannot read) into its refusal.
func guarded(err *error) {
	if r := recover(); r != nil {
		*err = Damaged(fmt.Sprint(r))
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

// Log is an open database: one process holds it at a time.
type Log struct {
	db   *bolt.DB
	path string
	seq  uint64
}

// Open opens (or makes) the database at path. Only one process may hold
// it: bbolt locks the file, and a second opener is told so. A fault while
// reading the mapped file (a damaged page that points outside it) is a
// panic here, not the end of the process, and is refused as damage.
func Open(path string) (*Log, error) {
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
	return &Log{db: db, path: path}, nil
}

// Path is the file the log is kept in.
func (l *Log) Path() string { return l.path }

// Close closes the file.
func (l *Log) Close() error { return l.db.Close() }

// Load reads the settings (nil for a new database) and every log entry,
// in order, each checked against its seal.
func (l *Log) Load() (meta []byte, entries [][]byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guarded(&err)
	err = l.db.View(func(tx *bolt.Tx) error {
		sealed := false
		if b := tx.Bucket(bucketMeta); b != nil {
			if v := b.Get(metaKey); v != nil {
				raw, s, err := unseal(metaKey, v)
				if err != nil {
					return Damaged(fmt.Sprintf("its settings are damaged: %v", err))
				}
				sealed = s
				meta = bytes.Clone(raw)
			}
		}
		b := tx.Bucket(bucketLog)
		if b == nil {
			return nil
		}
		var last uint64
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return Damaged(fmt.Sprintf("a log entry's key is %d bytes, not 8", len(k)))
			}
			n := binary.BigEndian.Uint64(k)
			if n != last+1 {
				return Damaged(fmt.Sprintf("its log goes from entry %d to entry %d", last, n))
			}
			last = n
			raw, s, err := unseal(k, v)
			switch {
			case err != nil:
				return Damaged(fmt.Sprintf("log entry %d is damaged: %v", n, err))
			case sealed && !s:
				// A file made with sealed values has no plain ones.
				return Damaged(fmt.Sprintf("log entry %d is damaged: it is not sealed, as every entry of this file is", n))
			}
			entries = append(entries, bytes.Clone(raw))
			l.seq = n
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--db %s: %w", l.path, err)
	}
	return meta, entries, nil
}

// Row is one refund or idempotency key as it stands: its id or key, and
// its JSON; a key row with no JSON is a key that is gone.
type Row struct {
	Key   string
	Value []byte
}

// Entry is what one step of the provider writes: its log entry, and the
// refunds and keys it changed, as they now stand.
type Entry struct {
	Log     []byte
	Refunds []Row
	Keys    []Row
	// BeforeCommit, when set, is called inside the transaction once
	// everything is written, before it commits: where a kill test ends
	// the process to find an aborted write.
	BeforeCommit func()
}

// Reset empties the log, refunds and keys and keeps meta as the
// database's settings: a new database's first write, and a reset's.
func (l *Log) Reset(meta []byte) error {
	err := l.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketLog, bucketRefunds, bucketKeys} {
			if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		m, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return m.Put(metaKey, seal(metaKey, meta))
	})
	if err != nil {
		return fmt.Errorf("--db %s: %w", l.path, err)
	}
	l.seq = 0
	return nil
}

// Append writes e in one transaction, made durable (fsync) before it
// returns: the log entry sealed under the next sequence number, the
// refunds and keys beside it.
func (l *Log) Append(e Entry) error {
	err := l.db.Update(func(tx *bolt.Tx) error {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], l.seq+1)
		if err := tx.Bucket(bucketLog).Put(k[:], seal(k[:], e.Log)); err != nil {
			return err
		}
		refunds, keys := tx.Bucket(bucketRefunds), tx.Bucket(bucketKeys)
		for _, r := range e.Refunds {
			if err := refunds.Put([]byte(r.Key), r.Value); err != nil {
				return err
			}
		}
		for _, r := range e.Keys {
			if r.Value == nil {
				if err := keys.Delete([]byte(r.Key)); err != nil {
					return err
				}
				continue
			}
			if err := keys.Put([]byte(r.Key), r.Value); err != nil {
				return err
			}
		}
		if e.BeforeCommit != nil {
			e.BeforeCommit()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("--db %s: %w", l.path, err)
	}
	l.seq++
	return nil
}

// Verify checks that the refunds and keys kept beside the log are the
// rows given, the state the log rebuilds: they were written together, so
// a difference means the file was changed behind the provider's back.
func (l *Log) Verify(refunds, keys []Row) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guarded(&err)
	return l.db.View(func(tx *bolt.Tx) error {
		rb, kb := tx.Bucket(bucketRefunds), tx.Bucket(bucketKeys)
		if n := rb.Stats().KeyN; n != len(refunds) {
			return fmt.Errorf("it holds %d refunds, but its log makes %d", n, len(refunds))
		}
		for _, r := range refunds {
			if got := rb.Get([]byte(r.Key)); !bytes.Equal(got, r.Value) {
				return fmt.Errorf("refund %s reads %s, but its log makes %s", r.Key, got, r.Value)
			}
		}
		if n := kb.Stats().KeyN; n != len(keys) {
			return fmt.Errorf("it holds %d idempotency keys, but its log makes %d", n, len(keys))
		}
		for _, r := range keys {
			if got := kb.Get([]byte(r.Key)); !bytes.Equal(got, r.Value) {
				return fmt.Errorf("key %q reads %s, but its log makes %s", r.Key, got, r.Value)
			}
		}
		return nil
	})
}

// Durable reads a database on its own, read-only, without serving: the
// JSON of every refund and every live key as the last write left them.
func Durable(path string) (refunds, keys [][]byte, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 250 * time.Millisecond, ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		rb, kb := tx.Bucket(bucketRefunds), tx.Bucket(bucketKeys)
		if rb == nil || kb == nil {
			return errors.New("not a replaylab serve database")
		}
		if err := rb.ForEach(func(_, v []byte) error {
			refunds = append(refunds, bytes.Clone(v))
			return nil
		}); err != nil {
			return err
		}
		return kb.ForEach(func(_, v []byte) error {
			keys = append(keys, bytes.Clone(v))
			return nil
		})
	})
	return refunds, keys, err
}
