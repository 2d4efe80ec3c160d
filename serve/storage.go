package serve

// Storage: where the provider keeps what it must not forget, as etcd raft
// keeps its Storage, with MemoryStorage beside the WAL. The server hands
// its storage one entry per step (Append), durable before any reply of
// the step leaves, and a reopen reads them back (Load) and replays them
// through a fresh core. memoryStorage keeps its entries in memory, so a
// test reopens from it as from a file; boltStorage keeps them in a bbolt
// file (--db, serve/internal/boltlog). A provider with no storage keeps
// nothing beyond its session, and pays for nothing.

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve/internal/boltlog"
)

// storage is what the server writes to at every step.
type storage interface {
	// Load returns the settings the storage was made with (nil: it is
	// new) and its entries' log, in order.
	Load() (*storeMeta, []logEntry, error)
	// Reset empties what is kept and keeps meta: the first write of a
	// new storage, and a reset's.
	Reset(meta storeMeta) error
	// Append keeps e, durably before it returns.
	Append(e step) error
	// Verify checks that the refunds and keys kept beside the log are
	// those the log rebuilt.
	Verify(refunds []ledger.Object, keys []ledger.Record) error
	Close() error
}

// step is one step of the provider as storage keeps it: the log entry,
// and every refund and key the step changed, as they now stand (a key
// with no record is gone).
type step struct {
	log     logEntry
	refunds []ledger.Object
	keys    []keyState
	// beforeCommit, when set, is called once everything of the step is
	// written and before it is kept: inside bbolt's transaction.
	beforeCommit func()
}

// keyState is an idempotency key as a step left it: its record, or nil
// where the key is gone.
type keyState struct {
	key string
	rec *ledger.Record
}

// storeMeta is what the storage was made with.
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

// memoryStorage keeps its entries, and the refunds and keys they leave,
// in memory: what a test reopens a provider from, without a file.
type memoryStorage struct {
	meta    *storeMeta
	log     []logEntry
	refunds map[ledger.ObjectID]ledger.Object
	keys    map[string]ledger.Record
}

func (m *memoryStorage) Load() (*storeMeta, []logEntry, error) {
	return m.meta, slices.Clone(m.log), nil
}

func (m *memoryStorage) Reset(meta storeMeta) error {
	m.meta, m.log = &meta, nil
	m.refunds, m.keys = map[ledger.ObjectID]ledger.Object{}, map[string]ledger.Record{}
	return nil
}

func (m *memoryStorage) Append(e step) error {
	if e.beforeCommit != nil {
		e.beforeCommit()
	}
	if m.refunds == nil {
		m.refunds, m.keys = map[ledger.ObjectID]ledger.Object{}, map[string]ledger.Record{}
	}
	m.log = append(m.log, e.log)
	for _, o := range e.refunds {
		m.refunds[o.ID] = o
	}
	for _, k := range e.keys {
		if k.rec == nil {
			delete(m.keys, k.key)
		} else {
			m.keys[k.key] = *k.rec
		}
	}
	return nil
}

func (m *memoryStorage) Verify(refunds []ledger.Object, keys []ledger.Record) error {
	if len(refunds) != len(m.refunds) || len(keys) != len(m.keys) {
		return fmt.Errorf("it holds %d refunds and %d keys, but its log makes %d and %d", len(m.refunds), len(m.keys), len(refunds), len(keys))
	}
	for _, o := range refunds {
		if got, ok := m.refunds[o.ID]; !ok || !sameJSON(got, o) {
			return fmt.Errorf("refund %s is not what its log makes", o.ID)
		}
	}
	for _, r := range keys {
		if got, ok := m.keys[r.Key]; !ok || !sameJSON(got, r) {
			return fmt.Errorf("key %q is not what its log makes", r.Key)
		}
	}
	return nil
}

func (m *memoryStorage) Close() error { return nil }

// sameJSON: a and b read the same as JSON, as a file would keep them.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// boltStorage keeps the entries in a bbolt file (--db): the log entry as
// JSON, the refunds and keys beside it, in one transaction.
type boltStorage struct{ log *boltlog.Log }

func (b boltStorage) Load() (*storeMeta, []logEntry, error) {
	rawMeta, raw, err := b.log.Load()
	if err != nil {
		return nil, nil, err
	}
	var meta *storeMeta
	if rawMeta != nil {
		meta = &storeMeta{}
		if err := json.Unmarshal(rawMeta, meta); err != nil {
			return nil, nil, b.where(boltlog.Damaged(fmt.Sprintf("its settings do not read: %v", err)))
		}
	}
	entries := make([]logEntry, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &entries[i]); err != nil {
			return nil, nil, b.where(boltlog.Damaged(fmt.Sprintf("log entry %d does not read: %v", i+1, err)))
		}
	}
	return meta, entries, nil
}

func (b boltStorage) Reset(meta storeMeta) error {
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return b.log.Reset(raw)
}

func (b boltStorage) Append(e step) error {
	raw, err := json.Marshal(e.log)
	if err != nil {
		return err
	}
	be := boltlog.Entry{Log: raw, BeforeCommit: e.beforeCommit}
	for _, o := range e.refunds {
		v, err := json.Marshal(o)
		if err != nil {
			return err
		}
		be.Refunds = append(be.Refunds, boltlog.Row{Key: o.ID.String(), Value: v})
	}
	for _, k := range e.keys {
		row := boltlog.Row{Key: k.key}
		if k.rec != nil {
			if row.Value, err = json.Marshal(k.rec); err != nil {
				return err
			}
		}
		be.Keys = append(be.Keys, row)
	}
	return b.log.Append(be)
}

func (b boltStorage) Verify(refunds []ledger.Object, keys []ledger.Record) error {
	rr := make([]boltlog.Row, len(refunds))
	for i, o := range refunds {
		v, _ := json.Marshal(o)
		rr[i] = boltlog.Row{Key: o.ID.String(), Value: v}
	}
	kr := make([]boltlog.Row, len(keys))
	for i, r := range keys {
		v, _ := json.Marshal(r)
		kr[i] = boltlog.Row{Key: r.Key, Value: v}
	}
	return b.log.Verify(rr, kr)
}

func (b boltStorage) Close() error { return b.log.Close() }

// where names the file in an error.
func (b boltStorage) where(err error) error { return fmt.Errorf("--db %s: %w", b.log.Path(), err) }

// failpoints is a storage that calls fail at the boundaries of each
// Append ("before-commit": the step is written and not yet kept, inside
// the transaction; "after-commit": it is durable, and no reply has left),
// for the tests that end the process there.
type failpoints struct {
	storage
	fail func(point string)
}

func (f failpoints) Append(e step) error {
	e.beforeCommit = func() { f.fail("before-commit") }
	if err := f.storage.Append(e); err != nil {
		return err
	}
	f.fail("after-commit")
	return nil
}

var (
	_ storage = (*memoryStorage)(nil)
	_ storage = boltStorage{}
	_ storage = failpoints{}
)
