// Package executor is the source article's executor, shared by the
// example clients that follow it (guarded-refund over the REST API,
// guarded-agent over MCP tools), written against the replaylab conform
// contract (docs/conform.md):
//
//   - one idempotency key per intent, minted once and written, with the
//     payload, durably into REPLAYLAB_STATE_DIR before the first send; a
//     second worker or a restarted process finds it there and reuses it;
//   - every outcome classified: a known failure before execution, recorded
//     but not terminal (pending, or a conflict for a key still executing),
//     known terminal, or unknown (a timeout, a server error, a closed
//     connection or stream, an error it cannot read);
//   - on unknown, reconcile first by listing the intent's refunds, and
//     resend the same key only inside its retention window;
//   - a pending refund is polled until it is terminal; a conflict is waited
//     out and retried with the same key;
//   - a parameter mismatch, a provider without an idempotency contract, or
//     an unknown past the window is reconciled by listing, then escalated
//     to a person with the evidence.
//
// A restarted process reads the ledger for every intent it left
// unresolved before it sends anything.
package executor

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Intent is one logical refund to make exactly once, as REPLAYLAB_INTENTS
// gives it.
type Intent struct {
	Intent   string `json:"intent"`
	Charge   string `json:"charge"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Belief is the line the contract asks for, one per intent.
type Belief struct {
	Intent   string `json:"intent"`
	Belief   string `json:"belief"`
	Refund   string `json:"refund,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// Intents reads REPLAYLAB_INTENTS; a program that cannot read them says
// so, as prog, and exits 2.
func Intents(prog string) []Intent {
	var intents []Intent
	if err := json.Unmarshal([]byte(os.Getenv("REPLAYLAB_INTENTS")), &intents); err != nil {
		fmt.Fprintln(os.Stderr, prog+": REPLAYLAB_INTENTS:", err)
		os.Exit(2)
	}
	return intents
}

// Millis is the environment variable name as milliseconds, def when unset
// or not a whole number.
func Millis(name string, def int) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 0 {
		n = def
	}
	return time.Duration(n) * time.Millisecond
}

// RequestTimeout is REPLAYLAB_REQUEST_TIMEOUT_MS, 5 s when it is unset or
// not a positive whole number.
func RequestTimeout() time.Duration {
	if d := Millis("REPLAYLAB_REQUEST_TIMEOUT_MS", 5000); d > 0 {
		return d
	}
	return 5 * time.Second
}

// Class is the source article's class of one create's outcome.
type Class int

const (
	// Unknown: nothing positively known (a timeout, a server error, a
	// closed connection, an error whose words say nothing).
	Unknown Class = iota
	// KnownTerminal: a refund came back.
	KnownTerminal
	// KnownFailure: refused before execution.
	KnownFailure
	// NotTerminal: the key is still executing; wait and ask again.
	NotTerminal
	// Mismatch: the key was used for other parameters.
	Mismatch
)

// Refund is what the provider showed of a refund.
type Refund struct {
	ID, Status, Intent string
	Amount             int64
}

// Provider is how the executor reaches the provider: the REST API or
// MCP tools.
type Provider interface {
	// Create sends one create under the record's key, classified.
	Create(ctx context.Context, rec *Record) (Refund, Class, error)
	// List is the refunds standing or ended for the intent.
	List(ctx context.Context, in Intent) ([]Refund, error)
	// Get reads one refund.
	Get(ctx context.Context, id string) (Refund, error)
}

// Record is what the executor keeps durably per intent: the key, the
// payload it stands for, when it was minted, and the outcome once settled.
type Record struct {
	Intent
	Key    string    `json:"key"`
	Minted time.Time `json:"minted"`
	Belief *Belief   `json:"belief,omitempty"`
}

// Executor carries the contract's settings and the provider.
type Executor struct {
	P         Provider
	State     string
	Timeout   time.Duration
	Retention time.Duration // 0: the provider keeps no keys
	// TrustEmptyList leaves out the retention rule: a resend under the
	// key is taken as safe at any age once a list shows no refund. It is
	// the flaw of examples/listing-refund, for conform --explore to find.
	TrustEmptyList bool
	Log            func(format string, args ...any)
}

// FromEnv is an executor over p with the contract's settings; prog names
// the program in what it logs. Without a state directory it exits 2.
func FromEnv(prog string, p Provider) *Executor {
	x := &Executor{
		P:         p,
		State:     os.Getenv("REPLAYLAB_STATE_DIR"),
		Timeout:   RequestTimeout(),
		Retention: Millis("REPLAYLAB_KEY_RETENTION_MS", 24*3600*1000),
		Log:       func(f string, a ...any) { fmt.Fprintf(os.Stderr, prog+": "+f+"\n", a...) },
	}
	if x.State == "" {
		fmt.Fprintln(os.Stderr, prog+": REPLAYLAB_STATE_DIR is not set; keys must be kept durably before a send")
		os.Exit(2)
	}
	return x
}

// Settle carries one intent to a belief it can stand behind.
func (x *Executor) Settle(in Intent) Belief {
	rec, fresh, err := x.load(in)
	if err != nil {
		return Belief{Intent: in.Intent, Belief: "escalated", Evidence: "could not keep the key durably, so nothing was sent: " + err.Error()}
	}
	if rec.Intent != in {
		// The same intent, asked again with other parameters: never a new
		// key, never a silent resend. A person decides.
		return x.escalate(in, fmt.Sprintf("key %s was minted for %d %s on %s; now asked for %d %s on %s",
			rec.Key, rec.Amount, rec.Currency, rec.Charge, in.Amount, in.Currency, in.Charge))
	}
	if rec.Belief != nil {
		return *rec.Belief
	}
	if !fresh {
		// Left unresolved by an earlier run, or being settled by another
		// worker: read the ledger before sending anything.
		if b, ok := x.reconcile(in); ok {
			return x.keep(rec, b)
		}
	}
	for sends := 0; ; sends++ {
		if sends > 0 || !fresh {
			switch {
			case sends >= 10:
				b, _ := x.reconcile(in)
				return x.keep(rec, x.escalate(in, "10 sends under key "+rec.Key+" settled nothing; "+b.Evidence))
			case x.Retention == 0:
				b, _ := x.reconcile(in)
				return x.keep(rec, x.escalate(in, "the provider keeps no idempotency keys, so no resend is safe; "+b.Evidence))
			case time.Since(rec.Minted)+x.Timeout >= x.Retention && !x.TrustEmptyList:
				if b, ok := x.reconcile(in); ok {
					return x.keep(rec, b)
				}
				return x.keep(rec, x.escalate(in, fmt.Sprintf("key %s may have expired at the provider (kept %v), so a resend could refund again; the ledger shows no refund for the intent", rec.Key, x.Retention)))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), x.Timeout)
		r, class, err := x.P.Create(ctx, rec)
		cancel()
		switch class {
		case KnownTerminal:
			switch r.Status {
			case "pending":
				return x.keep(rec, x.poll(in, r.ID))
			case "succeeded":
				return x.keep(rec, Belief{Intent: in.Intent, Belief: "done", Refund: r.ID})
			}
			return x.keep(rec, Belief{Intent: in.Intent, Belief: "failed", Refund: r.ID, Evidence: "refund " + r.ID + " ended " + r.Status})
		case KnownFailure:
			// This send was refused before it ran; another run sending
			// the same intent at once may have made the refund. The
			// ledger says which before the user is told it failed.
			if b, ok := x.reconcile(in); ok && b.Belief == "done" {
				return x.keep(rec, b)
			}
			return x.keep(rec, Belief{Intent: in.Intent, Belief: "failed", Evidence: "refused before execution: " + err.Error()})
		case NotTerminal:
			// The key is still executing: wait, then ask again with it.
			x.Log("%s: key %s still executing; waiting", in.Intent, rec.Key)
			time.Sleep(x.Timeout / 4)
		case Mismatch:
			return x.keep(rec, x.escalate(in, "the provider refused key "+rec.Key+" for other parameters: "+err.Error()))
		default:
			x.Log("%s: outcome unknown (%v); reconciling", in.Intent, err)
			if x.Retention == 0 {
				continue // the check at the top escalates
			}
			if b, ok := x.reconcile(in); ok {
				return x.keep(rec, b)
			}
		}
	}
}

// reconcile lists the intent's refunds. It settles the intent when the
// ledger shows one refund standing for it (polling one still pending), or
// only failed ones; ok is false when the list shows nothing to go on.
func (x *Executor) reconcile(in Intent) (Belief, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), x.Timeout)
	defer cancel()
	all, err := x.P.List(ctx, in)
	if err != nil {
		return Belief{Intent: in.Intent, Evidence: "the list of refunds failed: " + err.Error()}, false
	}
	var live, failed []Refund
	for _, r := range all {
		if r.Status == "succeeded" || r.Status == "pending" {
			live = append(live, r)
		} else {
			failed = append(failed, r)
		}
	}
	switch {
	case len(live) > 1:
		ids := make([]string, len(live))
		for i, r := range live {
			ids[i] = r.ID + " " + r.Status
		}
		return x.escalate(in, "the ledger holds "+strconv.Itoa(len(live))+" refunds for the intent: "+strings.Join(ids, ", ")), true
	case len(live) == 1 && live[0].Status == "pending":
		return x.poll(in, live[0].ID), true
	case len(live) == 1:
		return Belief{Intent: in.Intent, Belief: "done", Refund: live[0].ID, Evidence: "found by listing: " + live[0].ID + " succeeded"}, true
	case len(failed) > 0:
		return Belief{Intent: in.Intent, Belief: "failed", Refund: failed[0].ID, Evidence: "found by listing: " + failed[0].ID + " " + failed[0].Status}, true
	}
	return Belief{Intent: in.Intent, Evidence: "a list of the refunds showed none for the intent"}, false
}

// poll reads a pending refund until it is terminal.
func (x *Executor) poll(in Intent, id string) Belief {
	deadline := time.Now().Add(5 * x.Timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), x.Timeout)
		r, err := x.P.Get(ctx, id)
		cancel()
		if err == nil && r.Status != "pending" {
			if r.Status == "succeeded" {
				return Belief{Intent: in.Intent, Belief: "done", Refund: id}
			}
			return Belief{Intent: in.Intent, Belief: "failed", Refund: id, Evidence: "refund " + id + " ended " + r.Status}
		}
		time.Sleep(x.Timeout / 10)
	}
	return Belief{Intent: in.Intent, Belief: "pending", Refund: id, Evidence: "still pending when the executor stopped polling"}
}

// escalate hands the intent to a person, with what the ledger shows.
func (x *Executor) escalate(in Intent, why string) Belief {
	b := Belief{Intent: in.Intent, Belief: "escalated", Evidence: why}
	ctx, cancel := context.WithTimeout(context.Background(), x.Timeout)
	defer cancel()
	if all, err := x.P.List(ctx, in); err == nil {
		seen := []string{}
		for _, r := range all {
			seen = append(seen, fmt.Sprintf("%s %d %s", r.ID, r.Amount, r.Status))
		}
		if len(seen) == 0 {
			seen = append(seen, "no refund for the intent")
		}
		b.Evidence += "; ledger: " + strings.Join(seen, ", ")
	}
	return b
}

// path is the intent's record in the state directory.
func (x *Executor) path(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(x.State, "intent-"+hex.EncodeToString(sum[:8])+".json")
}

// load reads the intent's record, or mints its key and writes the record
// before anything is sent. Two workers racing here end with one key: the
// record appears whole, by a hard link that fails if the name is taken.
func (x *Executor) load(in Intent) (*Record, bool, error) {
	path := x.path(in.Intent)
	if rec, err := read(path); err == nil {
		return rec, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, false, err
	}
	rec := &Record{Intent: in, Key: "refund-" + hex.EncodeToString(raw[:]), Minted: time.Now()}
	tmp, err := x.writeTemp(rec)
	if err != nil {
		return nil, false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			rec, err := read(path)
			return rec, false, err
		}
		return nil, false, err
	}
	return rec, true, syncDir(x.State)
}

// keep writes the settled belief into the record, so that a later run
// answers from it.
func (x *Executor) keep(rec *Record, b Belief) Belief {
	rec.Belief = &b
	if tmp, err := x.writeTemp(rec); err == nil {
		if os.Rename(tmp, x.path(rec.Intent.Intent)) != nil {
			os.Remove(tmp)
		}
		_ = syncDir(x.State)
	}
	return b
}

func (x *Executor) writeTemp(rec *Record) (string, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(x.State, ".record-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func read(path string) (*Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rec, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
