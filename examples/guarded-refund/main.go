// Command guarded-refund is the executor the source article asks for,
// written against the replaylab conform contract (docs/conform.md) with
// stripe-go:
//
//   - one idempotency key per intent, minted once and written, with the
//     payload, durably into REPLAYLAB_STATE_DIR before the first send; a
//     second worker or a restarted process finds it there and reuses it;
//   - every outcome classified: a known failure before execution, recorded
//     but not terminal (pending, or a 409 for a key still executing),
//     known terminal, or unknown (a timeout, a 5xx, a closed connection);
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
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	stripe "github.com/stripe/stripe-go/v82"
)

// intent is one logical refund to make exactly once, as REPLAYLAB_INTENTS
// gives it.
type intent struct {
	Intent   string `json:"intent"`
	Charge   string `json:"charge"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// belief is the line the contract asks for, one per intent.
type belief struct {
	Intent   string `json:"intent"`
	Belief   string `json:"belief"`
	Refund   string `json:"refund,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// record is what the executor keeps durably per intent: the key, the
// payload it stands for, when it was minted, and the outcome once settled.
type record struct {
	intent
	Key    string    `json:"key"`
	Minted time.Time `json:"minted"`
	Belief *belief   `json:"belief,omitempty"`
}

// executor carries the contract's settings and the client.
type executor struct {
	sc        *stripe.Client
	state     string
	timeout   time.Duration
	retention time.Duration // 0: the provider keeps no keys
	log       func(format string, args ...any)
}

func main() {
	var intents []intent
	if err := json.Unmarshal([]byte(os.Getenv("REPLAYLAB_INTENTS")), &intents); err != nil {
		fmt.Fprintln(os.Stderr, "guarded-refund: REPLAYLAB_INTENTS:", err)
		os.Exit(2)
	}
	x := &executor{
		state:     os.Getenv("REPLAYLAB_STATE_DIR"),
		timeout:   millis("REPLAYLAB_REQUEST_TIMEOUT_MS", 5000),
		retention: millis("REPLAYLAB_KEY_RETENTION_MS", 24*3600*1000),
		log:       func(f string, a ...any) { fmt.Fprintf(os.Stderr, "guarded-refund: "+f+"\n", a...) },
	}
	if x.state == "" {
		fmt.Fprintln(os.Stderr, "guarded-refund: REPLAYLAB_STATE_DIR is not set; keys must be kept durably before a send")
		os.Exit(2)
	}
	// The executor decides every resend itself: the library sends once.
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:               stripe.String(os.Getenv("REPLAYLAB_API_BASE")),
		HTTPClient:        &http.Client{},
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	x.sc = stripe.NewClient(os.Getenv("REPLAYLAB_API_KEY"), stripe.WithBackends(&stripe.Backends{API: backend, Connect: backend, Uploads: backend, MeterEvents: backend}))

	out := json.NewEncoder(os.Stdout)
	for _, in := range intents {
		_ = out.Encode(x.settle(in))
	}
}

func millis(name string, def int) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 0 {
		n = def
	}
	return time.Duration(n) * time.Millisecond
}

// settle carries one intent to a belief it can stand behind.
func (x *executor) settle(in intent) belief {
	rec, fresh, err := x.load(in)
	if err != nil {
		return belief{Intent: in.Intent, Belief: "escalated", Evidence: "could not keep the key durably, so nothing was sent: " + err.Error()}
	}
	if rec.intent != in {
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
			case x.retention == 0:
				b, _ := x.reconcile(in)
				return x.keep(rec, x.escalate(in, "the provider keeps no idempotency keys, so no resend is safe; "+b.Evidence))
			case time.Since(rec.Minted)+x.timeout >= x.retention:
				if b, ok := x.reconcile(in); ok {
					return x.keep(rec, b)
				}
				return x.keep(rec, x.escalate(in, fmt.Sprintf("key %s may have expired at the provider (kept %v), so a resend could refund again; the ledger shows no refund for the intent", rec.Key, x.retention)))
			}
		}
		r, err := x.create(rec)
		switch class(r, err) {
		case "known_terminal":
			if r.Status == stripe.RefundStatusPending {
				return x.keep(rec, x.poll(in, r.ID))
			}
			if r.Status == stripe.RefundStatusSucceeded {
				return x.keep(rec, belief{Intent: in.Intent, Belief: "done", Refund: r.ID})
			}
			return x.keep(rec, belief{Intent: in.Intent, Belief: "failed", Refund: r.ID, Evidence: "refund " + r.ID + " ended " + string(r.Status)})
		case "known_failure_before_execution":
			return x.keep(rec, belief{Intent: in.Intent, Belief: "failed", Evidence: "refused before execution: " + err.Error()})
		case "recorded_not_terminal":
			// The key is still executing: wait, then ask again with it.
			x.log("%s: key %s still executing; waiting", in.Intent, rec.Key)
			time.Sleep(x.timeout / 4)
		case "mismatch":
			return x.keep(rec, x.escalate(in, "the provider refused key "+rec.Key+" for other parameters: "+err.Error()))
		default: // unknown
			x.log("%s: outcome unknown (%v); reconciling", in.Intent, err)
			if x.retention == 0 {
				continue // the check at the top escalates
			}
			if b, ok := x.reconcile(in); ok {
				return x.keep(rec, b)
			}
		}
	}
}

// class sorts a create's outcome into the source article's classes.
func class(r *stripe.Refund, err error) string {
	if err == nil {
		return "known_terminal"
	}
	var se *stripe.Error
	if !errors.As(err, &se) {
		return "unknown" // a timeout or a closed connection
	}
	switch {
	case se.HTTPStatusCode == http.StatusConflict:
		return "recorded_not_terminal"
	case se.Type == stripe.ErrorTypeIdempotency:
		return "mismatch"
	case se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500 && se.HTTPStatusCode != http.StatusTooManyRequests:
		return "known_failure_before_execution"
	}
	return "unknown"
}

func (x *executor) create(rec *record) (*stripe.Refund, error) {
	p := &stripe.RefundCreateParams{Charge: stripe.String(rec.Charge), Amount: stripe.Int64(rec.Amount)}
	p.AddMetadata("intent", rec.Intent)
	p.SetIdempotencyKey(rec.Key)
	ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
	defer cancel()
	return x.sc.V1Refunds.Create(ctx, p)
}

// reconcile lists the intent's refunds. It settles the intent when the
// ledger shows one refund standing for it (polling one still pending), or
// only failed ones; ok is false when the list shows nothing to go on.
func (x *executor) reconcile(in intent) (belief, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
	defer cancel()
	var live, failed []*stripe.Refund
	for r, err := range x.sc.V1Refunds.List(ctx, &stripe.RefundListParams{Charge: stripe.String(in.Charge)}) {
		if err != nil {
			return belief{Intent: in.Intent, Evidence: "the list of refunds failed: " + err.Error()}, false
		}
		if r.Metadata["intent"] != in.Intent {
			continue
		}
		if r.Status == stripe.RefundStatusSucceeded || r.Status == stripe.RefundStatusPending {
			live = append(live, r)
		} else {
			failed = append(failed, r)
		}
	}
	switch {
	case len(live) > 1:
		ids := make([]string, len(live))
		for i, r := range live {
			ids[i] = r.ID + " " + string(r.Status)
		}
		return x.escalate(in, "the ledger holds "+strconv.Itoa(len(live))+" refunds for the intent: "+strings.Join(ids, ", ")), true
	case len(live) == 1 && live[0].Status == stripe.RefundStatusPending:
		return x.poll(in, live[0].ID), true
	case len(live) == 1:
		return belief{Intent: in.Intent, Belief: "done", Refund: live[0].ID, Evidence: "found by listing: " + live[0].ID + " succeeded"}, true
	case len(failed) > 0:
		return belief{Intent: in.Intent, Belief: "failed", Refund: failed[0].ID, Evidence: "found by listing: " + failed[0].ID + " " + string(failed[0].Status)}, true
	}
	return belief{Intent: in.Intent, Evidence: "a list of the charge's refunds showed none for the intent"}, false
}

// poll reads a pending refund until it is terminal.
func (x *executor) poll(in intent, id string) belief {
	deadline := time.Now().Add(5 * x.timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
		r, err := x.sc.V1Refunds.Retrieve(ctx, id, nil)
		cancel()
		if err == nil && r.Status != stripe.RefundStatusPending {
			if r.Status == stripe.RefundStatusSucceeded {
				return belief{Intent: in.Intent, Belief: "done", Refund: id}
			}
			return belief{Intent: in.Intent, Belief: "failed", Refund: id, Evidence: "refund " + id + " ended " + string(r.Status)}
		}
		time.Sleep(x.timeout / 10)
	}
	return belief{Intent: in.Intent, Belief: "pending", Refund: id, Evidence: "still pending when the executor stopped polling"}
}

// escalate hands the intent to a person, with what the ledger shows.
func (x *executor) escalate(in intent, why string) belief {
	b := belief{Intent: in.Intent, Belief: "escalated", Evidence: why}
	if found, ok := x.reconcileQuiet(in); ok {
		b.Evidence += "; ledger: " + found
	}
	return b
}

// reconcileQuiet lists the intent's refunds as evidence, without settling.
func (x *executor) reconcileQuiet(in intent) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
	defer cancel()
	var seen []string
	for r, err := range x.sc.V1Refunds.List(ctx, &stripe.RefundListParams{Charge: stripe.String(in.Charge)}) {
		if err != nil {
			return "", false
		}
		if r.Metadata["intent"] == in.Intent {
			seen = append(seen, fmt.Sprintf("%s %d %s", r.ID, r.Amount, r.Status))
		}
	}
	if len(seen) == 0 {
		return "no refund for the intent", true
	}
	return strings.Join(seen, ", "), true
}

// path is the intent's record in the state directory.
func (x *executor) path(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(x.state, "intent-"+hex.EncodeToString(sum[:8])+".json")
}

// load reads the intent's record, or mints its key and writes the record
// before anything is sent. Two workers racing here end with one key: the
// record appears whole, by a hard link that fails if the name is taken.
func (x *executor) load(in intent) (*record, bool, error) {
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
	rec := &record{intent: in, Key: "refund-" + hex.EncodeToString(raw[:]), Minted: time.Now()}
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
	return rec, true, syncDir(x.state)
}

// keep writes the settled belief into the record, so that a later run
// answers from it.
func (x *executor) keep(rec *record, b belief) belief {
	rec.Belief = &b
	if tmp, err := x.writeTemp(rec); err == nil {
		if os.Rename(tmp, x.path(rec.Intent)) != nil {
			os.Remove(tmp)
		}
		_ = syncDir(x.state)
	}
	return b
}

func (x *executor) writeTemp(rec *record) (string, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(x.state, ".record-*")
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

func read(path string) (*record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec record
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
