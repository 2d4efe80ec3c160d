package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// SessionSchemaID names the session format: what a real client did to the
// provider of replaylab serve, recorded with serve --record.
const SessionSchemaID = "replaylab.session/v1"

// Session is a recorded serve session: the settings the provider ran
// under, every request it received in the order the ledger took them,
// what the clock made happen, the final ledger and the verdicts the
// provider can reach alone.
type Session struct {
	// Started is the wall-clock time of tick 0 (RFC 3339).
	Started string `json:"started,omitempty"`
	// Mission is the mission whose schedule gave the faults, when serve
	// played one (--mission).
	Mission  *missions.Mission `json:"mission,omitempty"`
	Settings SessionSettings   `json:"settings"`
	Requests []SessionRequest  `json:"requests"`
	Changes  []SessionChange   `json:"changes"`
	// Tick is the tick the provider's clock stood at when the session was
	// taken, before any settling.
	Tick int `json:"tick"`
	// Settled: the clock was then run on until nothing was in motion
	// before the ledger and outcome were taken, as serve does when it
	// stops.
	Settled bool             `json:"settled"`
	Ledger  ledger.Snapshot  `json:"ledger"`
	Outcome missions.Outcome `json:"outcome"`
	// Source, when set, yields the requests in place of Requests: a
	// provider keeps its requests its own way, and a session it hands
	// over to be written (WriteSession), reported (SessionText) or read as
	// a history (History) need not copy them. Each reads it.
	Source iter.Seq[SessionRequest] `json:"-"`
}

// Each yields the session's requests: from Source when it is set, else
// Requests.
func (s *Session) Each() iter.Seq[SessionRequest] {
	if s.Source != nil {
		return s.Source
	}
	return slices.Values(s.Requests)
}

// SessionSettings are what the provider ran under.
type SessionSettings struct {
	Contract ledger.Contract `json:"contract"`
	// Profile is the provider's profile, carried whole where the name
	// alone does not give it (any but v1, v2 and none).
	Profile *ledger.Profile `json:"provider,omitempty"`
	// Retention is how many ticks a key was kept.
	Retention int `json:"retention"`
	// TickMillis is how long one tick lasted, in milliseconds.
	TickMillis int64 `json:"tick_ms"`
	// Faults is the list successive creates met (--faults), in order.
	Faults []missions.Fixture `json:"faults,omitempty"`
	// ReadFaults is the list successive reads met (--faults), in order.
	ReadFaults []missions.ReadStep `json:"read_faults,omitempty"`
	// Delay and Resolve are what a listed late_commit or pending does
	// (in --faults or a list the control endpoint sets): the ticks until
	// it lands, and the status a pending refund reaches.
	Delay   int           `json:"delay,omitempty"`
	Resolve ledger.Status `json:"resolve,omitempty"`
	// IntentField is the form field that linked a request to its intent.
	IntentField string `json:"intent_field"`
	// MetadataInDigest: the payload digest bound metadata too, as Stripe
	// compares it, so a key reused with other metadata was refused. A
	// session or database from before serve compared metadata has it
	// false, as its digests were made.
	MetadataInDigest bool `json:"metadata_in_digest,omitempty"`
	// PayloadUTF8: a create's payload keeps its characters as their
	// UTF-8, with only the bytes that would break a query escaped. A
	// session or database from before has it false: its payloads escape
	// every byte but letters, digits and -_.~, and an update keeps that
	// form, so that they replay to the same bytes.
	PayloadUTF8 bool `json:"payload_utf8,omitempty"`
}

// Request kinds.
const (
	// RequestCreate is POST /v1/refunds that reached the fault table.
	RequestCreate = "create"
	// RequestRefused is POST /v1/refunds refused before the fault
	// table: a malformed form, a missing parameter or intent field.
	RequestRefused = "refused"
	// RequestRetrieve is GET /v1/refunds/{id}.
	RequestRetrieve = "retrieve"
	// RequestList is GET /v1/refunds.
	RequestList = "list"
	// RequestFaults is POST /_replaylab/faults: from here on, creates
	// meet the faults in its payload (faults=a,b,c).
	RequestFaults = "faults"
	// RequestUpdate is POST /v1/refunds/{id}: its payload is the id, then
	// the metadata sent (id?metadata[k]=v).
	RequestUpdate = "update"
	// RequestCancel is POST /v1/refunds/{id}/cancel: its payload is the id.
	RequestCancel = "cancel"
)

// CountsAgain reports whether a request of kind may count others alike
// it (SessionRequest.Again): a read or a refused request, which change
// nothing.
func CountsAgain(kind string) bool {
	return kind == RequestRetrieve || kind == RequestList || kind == RequestRefused
}

// What the transport did with a reply.
const (
	// WireDelivered: the reply was written to the client.
	WireDelivered = "delivered"
	// WireHeld: the reply was held until the client gave up (or the hold
	// ran out), then the connection closed without one.
	WireHeld = "held"
	// WireClosed: the connection closed at once, without a reply.
	WireClosed = "closed"
	// WireGone: the client left before the reply could be written.
	WireGone = "gone"
	// WireOpen: the reply was still held or being written when the
	// session was taken (only in a session read while serving).
	WireOpen = "open"
)

// SessionRequest is one request the provider received.
type SessionRequest struct {
	Seq  int    `json:"seq"`
	Tick int    `json:"tick"`
	Kind string `json:"kind"`
	// Intent is the value of the intent field; empty when it was absent.
	Intent string `json:"intent,omitempty"`
	Key    string `json:"key,omitempty"`
	// Digest and Payload are what the ledger bound and kept, for a
	// create; for a read, Payload is its query (the id, or the list's
	// filters).
	Digest  string `json:"digest,omitempty"`
	Payload string `json:"payload,omitempty"`
	// Fixture is the fault the create met, with its delay (ticks) and
	// the status a pending refund reached.
	Fixture missions.Fixture `json:"fixture,omitempty"`
	Delay   int              `json:"delay,omitempty"`
	Resolve ledger.Status    `json:"resolve,omitempty"`
	// ReadFault is the fault a read met, and for read_lagging Delay is
	// how many ticks behind the ledger it showed.
	ReadFault missions.ReadFault `json:"read_fault,omitempty"`
	// Provider is what the provider did with a create: a ledger action,
	// or "not_reached" when the fault dropped it on the way.
	Provider string `json:"provider,omitempty"`
	// Response is the ledger's answer, sent or not.
	Response *ledger.Response `json:"response,omitempty"`
	// Wire is what the transport did with the reply (delivered, held,
	// closed, gone), Status the HTTP status sent and Error the error's
	// type and code.
	Wire   string `json:"wire"`
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Shown lists the refunds the reply showed, with the status shown.
	Shown []missions.EvidenceObject `json:"shown,omitempty"`
	// Cut marks a read whose query was longer than the session keeps:
	// Payload holds its start, and replay takes Shown as recorded.
	Cut bool `json:"cut,omitempty"`
	// Call is the MCP tool call that carried the request (serve --mcp);
	// nil for a request over the REST API.
	Call *ToolCall `json:"call,omitempty"`
	// Traceparent is the W3C trace context the client sent with the
	// request (the traceparent header, or an MCP call's
	// _meta.traceparent), as sent: the provider's span of the request
	// joins the client's trace.
	Traceparent string `json:"traceparent,omitempty"`
	// Held says how a reply held (wire held) ended: what let the provider
	// stop holding it, and the tick it came at.
	Held *HeldEnd `json:"held_end,omitempty"`
	// Repeat, on a create for an intent that had one before, says what
	// it repeated and how (WithRepeats): the hop that sent it, as far as
	// the wire shows.
	Repeat *Repeat `json:"repeat,omitempty"`
	// Again counts the requests that came right after this one and were
	// the same request answered alike (a client polling one refund, or
	// sending one refused request again): the session keeps them as a
	// count, not each one, so that a client's loop grows no memory. A
	// read of a refund that does not exist is alike any other such read,
	// whatever id it named: Payload is the first one's. Only reads and
	// refused requests over REST, without a fault or a trace context,
	// are counted so.
	Again int `json:"again,omitempty"`
}

// HeldEnd is how a held reply ended.
type HeldEnd struct {
	// How is one of the Held* words.
	How  string `json:"how"`
	Tick int    `json:"tick"`
}

// How a held reply ended.
const (
	// HeldCancelled: the client's notifications/cancelled came (its tick
	// and reason are the call's cancelled).
	HeldCancelled = "cancelled"
	// HeldClientClosed: the client closed the connection or the call's
	// response stream without a word (under MCP 2026-07-28 that is the
	// call's cancellation).
	HeldClientClosed = "client_closed"
	// HeldSessionEnded: the client ended its MCP session (DELETE, or the
	// end of its input over stdio).
	HeldSessionEnded = "session_ended"
	// HeldCap: the provider's cap on a hold (serve --hold) ran out first.
	HeldCap = "hold_cap"
	// HeldServeStopped: the reply was still held when serve stopped (or
	// died: a reopened --db says so of a hold whose end it never logged).
	HeldServeStopped = "serve_stopped"
)

// HeldWords lists How's words, in the order above.
func HeldWords() []string {
	return []string{HeldCancelled, HeldClientClosed, HeldSessionEnded, HeldCap, HeldServeStopped}
}

// ToolCall is an MCP tool call as the session keeps it: the tool, the
// transport, the MCP session and the JSON-RPC request id that carried it,
// and the cancellation the client sent for it, if one came.
type ToolCall struct {
	Tool string `json:"tool"`
	// Transport is "http" (Streamable HTTP) or "stdio".
	Transport string `json:"transport"`
	// Session is the MCP session id (Mcp-Session-Id); "" over stdio.
	Session string `json:"session,omitempty"`
	// ID is the JSON-RPC request id as the client sent it, in JSON: 7 or
	// "call-7".
	ID string `json:"id"`
	// Revision is the MCP revision of a per-request call (2026-07-28 and
	// after, which have no sessions: the call is its own POST, and the
	// closing of its response stream is its cancellation); empty for a
	// call in a session (2025-11-25 and before) or over stdio.
	Revision string `json:"revision,omitempty"`
	// Cancelled is the client's notifications/cancelled for this call:
	// received and recorded, it undoes nothing.
	Cancelled *Cancellation `json:"cancelled,omitempty"`
}

// Cancellation is a client's cancellation of a tool call: the tick it
// came at and the reason it gave.
type Cancellation struct {
	Tick   int    `json:"tick"`
	Reason string `json:"reason,omitempty"`
}

// MCP transports.
const (
	TransportHTTP  = "http"
	TransportStdio = "stdio"
)

// SessionChange is something the provider did on its own as the clock
// moved: a late commit landing, a pending refund resolving, a key pruned.
type SessionChange struct {
	Tick   int               `json:"tick"`
	Kind   ledger.ChangeKind `json:"kind"`
	Object ledger.ObjectID   `json:"object,omitempty"`
	Key    string            `json:"key,omitempty"`
	Intent string            `json:"intent,omitempty"`
	Status ledger.Status     `json:"status,omitempty"`
}

// sessionDocument is a session as written to disk: the schema id first.
type sessionDocument struct {
	Schema string `json:"schema"`
	*Session
}

// MarshalSession renders a session as indented JSON with a trailing
// newline; the same session gives the same bytes.
func MarshalSession(s *Session) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteSession(&buf, s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SchemaOf is the "schema" field of a JSON document, or "" when it has
// none (or is not a JSON object).
func SchemaOf(data []byte) string {
	var head struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &head) != nil {
		return ""
	}
	return head.Schema
}

// UnmarshalSession reads a session file; name is used in messages.
func UnmarshalSession(name string, data []byte) (*Session, error) {
	if len(data) > MaxCaseBytes {
		return nil, fmt.Errorf("%s: file is %d bytes; a session file may be at most %d", name, len(data), MaxCaseBytes)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if i := invalidUTF8(data); i >= 0 {
		line, col := position(data, int64(i))
		return nil, fmt.Errorf("%s:%d:%d: the file is not UTF-8 text (byte 0x%02x); a session file is UTF-8 JSON", name, line, col, data[i])
	}
	if !json.Valid(data) {
		// The decoder words where the syntax breaks, before any word on
		// the schema, which a broken file cannot be read for.
		var v any
		return nil, sessionJSONError(name, data, json.Unmarshal(data, &v))
	}
	if s := SchemaOf(data); s != SessionSchemaID {
		return nil, fmt.Errorf("%s: not a replaylab session: schema is %q (expected %q)", name, s, SessionSchemaID)
	}
	doc := sessionDocument{Session: &Session{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, sessionJSONError(name, data, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: unexpected data after the session object", name)
	}
	if err := doc.Session.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return doc.Session, nil
}

func sessionJSONError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("%s:%d:%d: invalid JSON: %v", name, line, col, se)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		return fmt.Errorf("%s:%d:%d: %s holds %s; expected %s", name, line, col, fieldPath(te.Field), valueWords(te.Value), typeWords(te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%s: the session ends too early: the file is truncated", name)
	}
	return fmt.Errorf("%s: %v", name, err)
}

// check refuses what no serve session holds, so that replay can run it.
func (s *Session) check() error {
	if s.Mission != nil {
		if err := s.Mission.Validate(); err != nil {
			return fmt.Errorf("mission %s: %w", s.Mission.ID, err)
		}
	}
	prof, err := missions.ResolveProfile(s.Settings.Contract, s.Settings.Profile)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	cfg := ledger.Config{Profile: prof, Retention: s.Settings.Retention}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if s.Settings.TickMillis < 1 {
		return fmt.Errorf("settings: tick_ms %d: must be at least 1", s.Settings.TickMillis)
	}
	if s.Settings.IntentField == "" {
		return errors.New("settings: intent_field is empty")
	}
	for _, f := range s.Settings.Faults {
		if _, err := missions.ParseFixture(string(f)); err != nil {
			return fmt.Errorf("settings: faults: %w", err)
		}
	}
	for _, r := range s.Settings.ReadFaults {
		if err := r.Check(); err != nil {
			return fmt.Errorf("settings: read_faults: %w", err)
		}
	}
	tick := 0
	for i, r := range s.Requests {
		where := "request " + strconv.Itoa(i+1)
		if r.Seq != i+1 {
			return fmt.Errorf("%s: seq is %d; requests are numbered from 1 in order", where, r.Seq)
		}
		if r.Tick < tick {
			return fmt.Errorf("%s: tick %d comes before the tick of the request before it (%d)", where, r.Tick, tick)
		}
		tick = r.Tick
		switch r.Kind {
		case RequestCreate:
			if _, err := missions.ParseFixture(string(r.Fixture)); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if r.Intent == "" {
				return fmt.Errorf("%s: a create has an intent", where)
			}
		case RequestRetrieve, RequestList:
			if r.ReadFault != "" {
				if err := (missions.ReadStep{Fault: r.ReadFault, Lag: r.Delay}).Check(); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				if r.Again > 0 {
					return fmt.Errorf("%s: again %d on a read that met %s: only reads that met no fault are counted again", where, r.Again, r.ReadFault)
				}
			}
		case RequestRefused, RequestFaults, RequestUpdate, RequestCancel:
		default:
			return fmt.Errorf("%s: unknown kind %q (accepted: create, refused, retrieve, list, update, cancel, faults)", where, r.Kind)
		}
		if r.Status != 0 && (r.Status < 100 || r.Status > 599) {
			return fmt.Errorf("%s: status %d is not an HTTP status (100 to 599, or none)", where, r.Status)
		}
		if r.Again < 0 || r.Again > math.MaxInt32 {
			return fmt.Errorf("%s: again %d: must be from 0 to %d", where, r.Again, math.MaxInt32)
		}
		if r.Again > 0 && !CountsAgain(r.Kind) {
			return fmt.Errorf("%s: again %d on a %s: only reads and refused requests are counted again", where, r.Again, r.Kind)
		}
		if r.Delay < 0 || r.Delay > 1<<20 {
			return fmt.Errorf("%s: delay %d: must be from 0 to 1048576 ticks", where, r.Delay)
		}
		if len(r.Error) > 80 || strings.Trim(r.Error, "abcdefghijklmnopqrstuvwxyz_/") != "" {
			return fmt.Errorf("%s: error %q: an error is its type and code, as invalid_request_error/resource_missing", where, termtext.Shorten(r.Error, 40))
		}
		switch r.Wire {
		case WireDelivered, WireHeld, WireClosed, WireGone, WireOpen:
		default:
			return fmt.Errorf("%s: unknown wire %q (accepted: delivered, held, closed, gone, open)", where, r.Wire)
		}
		if c := r.Call; c != nil {
			switch {
			case c.Transport != TransportHTTP && c.Transport != TransportStdio:
				return fmt.Errorf("%s: call: unknown transport %q (accepted: http, stdio)", where, c.Transport)
			case c.Tool == "" || c.ID == "":
				return fmt.Errorf("%s: call: a tool call has its tool and its JSON-RPC id", where)
			case c.Cancelled != nil && c.Cancelled.Tick < r.Tick:
				return fmt.Errorf("%s: call: cancelled at tick %d, before the call came (tick %d)", where, c.Cancelled.Tick, r.Tick)
			}
		}
	}
	return nil
}

// AsCase is the session as a case, for compare to set beside simulated
// cases: each create an attempt, each read a read-back, each change of
// the clock its event. The case's mission is the session's mission, or,
// without one, a mission made of the creates as they came. Stable keys
// reads on when every intent kept one key.
func (s *Session) AsCase() *missions.Case {
	c := &missions.Case{
		Settings: missions.Settings{StableKeys: stableKeys(s.Requests), Policy: missions.RealClient, Contract: s.Settings.Contract, KeySource: missions.KeyPerIntent, Seed: missions.DefaultSeed},
		Ledger:   s.Ledger,
		Outcome:  s.Outcome,
		Version:  2,
	}
	if s.Mission != nil {
		c.Mission = *s.Mission
	} else {
		c.Mission = s.madeMission()
	}
	c.Settings.Profile = s.Settings.Profile
	prof := s.ProfileOf()
	attempt, ci := 0, 0
	effects, step := 0, 0
	flush := func(upTo int) {
		for ; ci < len(s.Changes) && s.Changes[ci].Tick <= upTo; ci++ {
			ch := s.Changes[ci]
			kind := map[ledger.ChangeKind]missions.EventKind{ledger.LateCommit: missions.EventCommit, ledger.Resolved: missions.EventResolve, ledger.Pruned: missions.EventPrune}[ch.Kind]
			switch {
			case ch.Kind == ledger.LateCommit:
				effects++
			case ch.Kind == ledger.Resolved && ch.Status == ledger.Failed:
				effects--
			}
			c.Events = append(c.Events, missions.Event{Tick: ch.Tick, Step: max(step, 1), Kind: kind, Intent: ch.Intent, Key: ch.Key, Provider: string(ch.Kind),
				Effects: effects, Note: missions.ChangeNote(ch.Kind, ch.Object, ch.Key, ch.Status)})
		}
	}
	for _, r := range s.Requests {
		if !IsStep(r) {
			continue
		}
		// The changes the clock made on its way to this request are
		// part of its step: the step moves the clock to the request.
		step++
		flush(r.Tick)
		at := len(c.Events)
		switch r.Kind {
		case RequestCreate:
			attempt++
			if r.Provider == string(ledger.Committed) {
				effects++
			}
			ev := missions.Event{Tick: r.Tick, Kind: missions.EventAttempt, Intent: r.Intent, Attempt: attempt, Key: r.Key, Fixture: r.Fixture,
				Provider: r.Provider, Response: r.Response, Observed: r.Observed(prof), Effects: effects,
				Note: fmt.Sprintf("Request %d met %s; the reply was %s.", r.Seq, r.Fixture, r.Wire)}
			c.Events = append(c.Events, ev)
		case RequestRetrieve, RequestList:
			note := fmt.Sprintf("Request %d read %s back.", r.Seq, orNone(r.Payload))
			if r.Again > 0 {
				note = fmt.Sprintf("Request %d read %s back, %d times in a row.", r.Seq, orNone(r.Payload), r.Again+1)
			}
			c.Events = append(c.Events, missions.Event{Tick: r.Tick, Kind: missions.EventRead, Intent: r.Intent, Effects: effects, Note: note})
		case RequestUpdate, RequestCancel:
			what := "updated the metadata of"
			if r.Kind == RequestCancel {
				what = "canceled"
				if r.Status == 200 {
					effects--
				}
			}
			c.Events = append(c.Events, missions.Event{Tick: r.Tick, Kind: missions.EventRead, Intent: r.Intent, Effects: effects,
				Note: fmt.Sprintf("Request %d %s %s; the reply was %s.", r.Seq, what, orNone(strings.SplitN(r.Payload, "?", 2)[0]), wireWords(r))})
		case RequestRefused:
			c.Events = append(c.Events, missions.Event{Tick: r.Tick, Kind: missions.EventRead, Intent: r.Intent, Effects: effects,
				Note: fmt.Sprintf("Request %d was refused before it reached the provider (%s); the reply was %s.", r.Seq, orNone(r.Error), wireWords(r))})
		}
		for i := at; i < len(c.Events); i++ {
			c.Events[i].Step = step
		}
	}
	// What the clock made once the requests ended: the settling step.
	step++
	flush(int(^uint(0) >> 1))
	for i := range c.Events {
		c.Events[i].Seq = i + 1
	}
	return c
}

// IsStep reports whether a request is a step of the client's run as the
// lab and AsCase tell it: every request but the control endpoint's
// change of the faults, which the harness sends, not the client.
func IsStep(r SessionRequest) bool { return r.Kind != RequestFaults }

// wireWords is what became of a reply: its status, or the wire.
func wireWords(r SessionRequest) string {
	if r.Wire == WireDelivered {
		return strconv.Itoa(r.Status)
	}
	return r.Wire
}

func orNone(s string) string {
	if s == "" {
		return "no key"
	}
	return s
}

// ProfileOf is the profile the session's provider ran under: the one it
// carries or the built-in it names (stripe-v1 for a session that names
// one it does not carry, which a read session never is: check refuses
// it).
func (s *Session) ProfileOf() *ledger.Profile {
	p, err := missions.ResolveProfile(s.Settings.Contract, s.Settings.Profile)
	if err != nil {
		p, _ = missions.ResolveProfile(ledger.V1, nil)
	}
	return p
}

// Observed is what the client could make of the reply to a create, under
// the provider's profile p.
func (r SessionRequest) Observed(p *ledger.Profile) missions.Observation {
	switch {
	case r.Wire == WireClosed:
		return missions.ObservedNothing
	case r.Wire != WireDelivered:
		return missions.ObservedTimeout
	}
	rep := missions.Reply{Heard: true, Code: r.Status}
	if r.Response != nil {
		rep.Error = ledger.Result{Action: ledger.Action(r.Provider), Response: *r.Response}.ErrorType()
		if ref := p.RefusalOf(ledger.Action(r.Provider), *r.Response); ref != nil {
			rep.ErrorCode = ref.Code
		}
	}
	if len(r.Shown) > 0 {
		rep.Object = missions.ObjectView{ID: r.Shown[0].Object, Status: r.Shown[0].Status}
	}
	return rep.Observation(p)
}

// stableKeys: every intent sent all its creates under one key.
func stableKeys(reqs []SessionRequest) bool {
	keys := map[string]string{}
	for _, r := range reqs {
		if r.Kind != RequestCreate {
			continue
		}
		k, seen := keys[r.Intent]
		if r.Key == "" || (seen && k != r.Key) {
			return false
		}
		keys[r.Intent] = r.Key
	}
	return true
}

// madeMission is a mission of the session's creates in the order they
// came, each meeting the fixture it met: what the simulated callers can
// be run on beside the client.
func (s *Session) madeMission() missions.Mission {
	m := missions.Mission{ID: "serve-session", Title: "A serve session", Goal: "What a real client did against replaylab serve.",
		Contract: s.Settings.Contract, Retention: s.Settings.Retention, KeySource: missions.KeyPerIntent}
	seen := map[string]bool{}
	for _, r := range s.Requests {
		if r.Kind != RequestCreate {
			continue
		}
		if !seen[r.Intent] {
			seen[r.Intent] = true
			m.Intents = append(m.Intents, missions.Intent{ID: r.Intent, Op: "refund", Principal: "client", Payload: map[string]string{"request": r.Payload}})
		}
		m.Schedule = append(m.Schedule, missions.Step{Attempt: r.Intent, Fixture: r.Fixture, Delay: r.Delay, Resolve: r.Resolve})
	}
	// The reads the client made, each with the fault it met, up to the
	// last that met one; a read counted again (Again) is that many more
	// reads that met none. A mission holds at most MaxSteps reads (and
	// one more here): a session whose faults fall past them, from a read
	// fault list longer than any mission's, has the case's reads end there.
	var reads []missions.ReadStep
	clean := 0 // reads without a fault since the last that met one
	for _, r := range s.Requests {
		if r.Kind != RequestRetrieve && r.Kind != RequestList {
			continue
		}
		if r.ReadFault == "" || r.ReadFault == missions.ReadOK {
			clean += 1 + r.Again
			continue
		}
		for ; clean > 0 && len(reads) <= missions.MaxSteps; clean-- {
			reads = append(reads, missions.ReadStep{Fault: missions.ReadOK})
		}
		clean = 0
		if len(reads) <= missions.MaxSteps {
			reads = append(reads, missions.ReadStep{Fault: r.ReadFault, Lag: r.Delay})
		}
	}
	m.Reads = reads
	return m
}

// History is the session as a history for replaylab check: each create an
// attempt, with what the client saw as ok (a refund came back), fail (a
// 4xx: not executed) or info (no answer, a 5xx, a refund still pending:
// it cannot tell; a pending refund the reply showed is also a read); each
// refund a delivered read showed, a read; and each refund the provider
// holds, a record.
func (s *Session) History() []HistoryLine {
	var start time.Time
	if s.Started != "" {
		start, _ = time.Parse(time.RFC3339Nano, s.Started)
	}
	tick := time.Duration(s.Settings.TickMillis) * time.Millisecond
	at := func(t int) string {
		if start.IsZero() {
			return ""
		}
		return start.Add(time.Duration(t) * tick).UTC().Format(time.RFC3339Nano)
	}
	owner := map[ledger.ObjectID]string{}
	for _, o := range s.Ledger.Objects {
		owner[o.ID] = o.Intent
	}
	var out []HistoryLine
	for r := range s.Each() {
		if (r.Kind == RequestRetrieve || r.Kind == RequestList || r.Kind == RequestUpdate || r.Kind == RequestCancel) && r.Wire == WireDelivered {
			for _, o := range r.Shown {
				out = append(out, HistoryLine{Type: LineRead, Intent: owner[o.Object], Object: o.Object.String(), Status: o.Status.String(), Start: at(r.Tick),
					Note: fmt.Sprintf("request %d read it back", r.Seq)})
			}
			continue
		}
		if r.Kind != RequestCreate && r.Kind != RequestRefused {
			continue
		}
		if r.Intent == "" {
			continue
		}
		l := HistoryLine{Type: LineAttempt, Intent: r.Intent, Key: r.Key, Digest: r.Digest, Start: at(r.Tick), End: at(r.Tick), Outcome: OutcomeInfo,
			Note: fmt.Sprintf("request %d met %s; the reply was %s", r.Seq, orFault(r.Fixture), r.Wire)}
		if r.Again > 0 {
			// Refused alike again and again: one line says it for all.
			l.Note = fmt.Sprintf("request %d and the %d alike right after it met %s; each reply was %s", r.Seq, r.Again, orFault(r.Fixture), r.Wire)
		}
		var seen *HistoryLine
		if r.Wire == WireDelivered {
			switch {
			case r.Status == 200 && len(r.Shown) > 0 && r.Shown[0].Status == ledger.Pending:
				// Recorded, not terminal: it may yet fail, so the client
				// cannot tell whether it took effect; what it saw is the
				// refund, pending.
				l.Object = r.Shown[0].Object.String()
				seen = &HistoryLine{Type: LineRead, Intent: r.Intent, Object: l.Object, Status: ledger.Pending.String(), Start: at(r.Tick),
					Note: fmt.Sprintf("request %d's reply showed it pending", r.Seq)}
			case r.Status == 200 && len(r.Shown) > 0 && !r.Shown[0].Status.Stands():
				// A replay showing the refund failed or canceled: known
				// not to stand.
				l.Outcome = OutcomeFail
				l.Object = r.Shown[0].Object.String()
			case r.Status == 200:
				l.Outcome = OutcomeOK
				if len(r.Shown) > 0 {
					l.Object = r.Shown[0].Object.String()
				}
			case r.Status >= 400 && r.Status < 500:
				l.Outcome = OutcomeFail
			}
		}
		out = append(out, l)
		if seen != nil {
			out = append(out, *seen)
		}
	}
	for _, o := range s.Ledger.Objects {
		out = append(out, HistoryLine{Type: LineRecord, Intent: o.Intent, Key: o.Key, Object: o.ID.String(), Status: o.Status.String()})
	}
	return out
}

func orFault(f missions.Fixture) string {
	if f == "" {
		return "no fault (refused before the fault table)"
	}
	return string(f)
}

// MarshalHistory writes history lines as JSON Lines, after a header line
// naming the format.
func MarshalHistory(lines []HistoryLine) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"schema":"` + HistorySchemaID + `"}` + "\n")
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
