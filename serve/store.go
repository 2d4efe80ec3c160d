package serve

// Open: a provider over a storage that outlives the process (--db),
// recovered by replaying its log through a fresh core.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve/internal/boltlog"
)

// ErrInUse is the error for a database another process holds open.
var ErrInUse = boltlog.ErrInUse

// ErrDamaged is what a damaged database is refused with.
var ErrDamaged = boltlog.ErrDamaged

// Durable reads a provider database on its own, without serving: every
// refund and every live key as the last durable write left them. It is
// what a check of the durable outcome reads after a crash.
func Durable(path string) ([]ledger.Object, []ledger.Record, error) {
	rawRefunds, rawKeys, err := boltlog.Durable(path)
	if err != nil {
		return nil, nil, err
	}
	objs := make([]ledger.Object, len(rawRefunds))
	for i, v := range rawRefunds {
		if err := json.Unmarshal(v, &objs[i]); err != nil {
			return nil, nil, err
		}
	}
	recs := make([]ledger.Record, len(rawKeys))
	for i, v := range rawKeys {
		if err := json.Unmarshal(v, &recs[i]); err != nil {
			return nil, nil, err
		}
	}
	return objs, recs, nil
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
	log, err := boltlog.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return reopen(o, boltStorage{log}, "--db "+path)
}

// reopen is New over st: a new storage is given the settings, one that
// holds a log has it replayed through the fresh core, and is then held
// to what the replay made. where names the storage in errors. A failed
// reopen closes st.
func reopen(o Options, st storage, where string) (*Server, *Recovered, error) {
	fail := func(err error) (*Server, *Recovered, error) {
		st.Close()
		return nil, nil, err
	}
	meta, entries, err := st.Load()
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
		s.c.keepPayloadForm(meta.Settings.PayloadUTF8)
	}
	want := s.meta(s.c, s.start)
	if meta == nil {
		if err := st.Reset(want); err != nil {
			return fail(fmt.Errorf("%s: %w", where, err))
		}
		s.st = s.withFailpoints(st)
		return s, nil, nil
	}
	if d := settingsDiff(meta, &want); d != "" {
		return fail(fmt.Errorf("%s was made with other settings: %s; start serve with the settings the database was made with, or give a new --db", where, d))
	}
	s.restart(time.Unix(0, meta.Start))
	rec := &Recovered{Entries: len(entries)}
	confirmed := map[int]bool{}
	for _, e := range entries {
		for _, seq := range e.Confirmed {
			confirmed[seq] = true
		}
	}
	for _, e := range entries {
		if e.Advance > 0 {
			s.offset += e.Advance
		}
		unconfirmed, err := s.c.replay(e, confirmed)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", where, err))
		}
		if unconfirmed {
			rec.Unconfirmed++
		}
	}
	s.c.endHolds()
	if err := st.Verify(s.c.state()); err != nil {
		if !errors.Is(err, ErrDamaged) {
			err = boltlog.Damaged("it does not agree with itself: " + err.Error())
		}
		return fail(fmt.Errorf("%s: %w", where, err))
	}
	rec.Requests, rec.Refunds, rec.InFlight = s.c.recovered()
	s.st = s.withFailpoints(st)
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
