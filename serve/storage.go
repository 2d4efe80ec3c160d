package serve

import "github.com/replaylab/replaylab/ledger"

// storage is where the provider keeps what it must not forget, as etcd
// raft keeps its Storage with MemoryStorage beside the durable one: the
// server writes to its storage at every step and never asks whether
// there is a disk. memoryStorage keeps nothing but the ledger in memory;
// store (--db, store.go) is the bbolt log and the state it leaves.
type storage interface {
	// write appends a log entry and writes the objects and keys it
	// touched, as led now holds them, in one transaction that is durable
	// before write returns. entry builds the two; a storage that keeps
	// nothing never calls it, so a provider in memory pays for nothing.
	write(entry func() (logEntry, touched), led *ledger.Ledger) error
	// wipe empties what is kept, keeping meta with a new start.
	wipe(meta storeMeta) error
	// failpoint is called at a durable boundary the server passes
	// ("after-reply"); setFailpoint sets what it calls, for the tests
	// that end the process there.
	failpoint(point string)
	setFailpoint(fail func(point string))
	close() error
}

// memoryStorage is the storage of a provider in memory: nothing outlives
// the process.
type memoryStorage struct{}

func (memoryStorage) write(func() (logEntry, touched), *ledger.Ledger) error { return nil }
func (memoryStorage) wipe(storeMeta) error                                   { return nil }
func (memoryStorage) failpoint(string)                                       {}
func (memoryStorage) setFailpoint(func(string))                              {}
func (memoryStorage) close() error                                           { return nil }

var (
	_ storage = memoryStorage{}
	_ storage = (*store)(nil)
)
