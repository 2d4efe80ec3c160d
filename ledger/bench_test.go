package ledger_test

import (
	"strconv"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
)

// The attempt benchmarks and their baseline run in one `go test -bench`
// invocation, so their ns/op compare on the same machine and load:
//
//	go test -run=^$ -bench=. -benchmem ./ledger/
//
// Every benchmark empties its ledger (or map) each batchSize operations so
// that memory stays bounded whatever b.N is; both keep the capacity they
// grew, so what is measured is the attempt, not the growing of memory.

const batchSize = 64

var benchKeys = func() []string {
	keys := make([]string, batchSize)
	for i := range keys {
		keys[i] = "ik_" + strconv.FormatUint(uint64(i)*0x9e3779b1, 16)
	}
	return keys
}()

var sink int

// BenchmarkLedgerAttempt is one Submit per op.
//
// stable-keys: each intent is tried three times with one key (the first
// attempt commits, the next two are replayed), the repeat pattern of a
// caller that retries a timeout with a stable key.
//
// fresh-keys: every attempt carries a new key, so every attempt executes,
// commits an effect and saves a record.
func BenchmarkLedgerAttempt(b *testing.B) {
	b.Run("stable-keys", func(b *testing.B) {
		benchLedger(b, func(i int) string { return benchKeys[(i/3)%batchSize] })
	})
	b.Run("fresh-keys", func(b *testing.B) {
		benchLedger(b, func(i int) string { return benchKeys[i%batchSize] })
	})
}

func benchLedger(b *testing.B, key func(i int) string) {
	b.ReportAllocs()
	l, err := ledger.New(ledger.Config{Profile: providers.Builtin("stripe-v1"), Retention: ledger.DefaultRetention})
	if err != nil {
		b.Fatal(err)
	}
	ex := ledger.Execution{Kind: ledger.Commit}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%batchSize == 0 {
			l.Reset()
		}
		res := l.Submit(ledger.Request{Intent: "refund-1042", Key: key(i), Digest: "3f9a0c1b2d4e5f60", Payload: "amount=45.00 order=1042"}, ex)
		sink += int(res.Response.Object)
	}
}

// BenchmarkBaselineMap is the floor an attempt is measured against: one
// insert into and one lookup in a bare Go map per op, with the same keys.
func BenchmarkBaselineMap(b *testing.B) {
	b.Run("stable-keys", func(b *testing.B) {
		benchMap(b, func(i int) string { return benchKeys[(i/3)%batchSize] })
	})
	b.Run("fresh-keys", func(b *testing.B) {
		benchMap(b, func(i int) string { return benchKeys[i%batchSize] })
	})
}

func benchMap(b *testing.B, key func(i int) string) {
	b.ReportAllocs()
	m := make(map[string]int)
	for i := 0; i < b.N; i++ {
		if i%batchSize == 0 {
			clear(m)
		}
		k := key(i)
		m[k] = i
		sink += m[k]
	}
}
