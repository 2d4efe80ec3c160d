package ledger

// The provider's profile: its idempotency contract as data. Every field
// is a rule of Submit; the providers package reads profiles from YAML and
// holds the built-in ones, written from each provider's own pages.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Profile is what a provider promises about repeated requests, as its
// documentation states it.
type Profile struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Summary is what sets the contract apart, in a line.
	Summary string `json:"summary"`
	// Docs are the pages the profile was written from.
	Docs []string `json:"docs"`
	// Assumed lists the fields the provider's own text does not pin down.
	Assumed []Assumption `json:"assumed,omitempty"`
	Key     KeyRule      `json:"key"`
	// Retention is how long the provider keeps a key, in wall time: serve
	// and conform keep it; a mission's ticks stand in for it.
	Retention Span   `json:"retention,omitempty"`
	Saves     Saves  `json:"saves"`
	Replay    Replay `json:"replay"`
	// FailedKey, when set, makes a key final once an attempt under it
	// failed: every later request under it gets this refusal. Nil: a
	// rejection before execution saves nothing (reusable).
	FailedKey *Refusal `json:"-"`
	// Mismatch is the refusal of a kept key sent with other parameters;
	// nil when the provider ignores them and answers from the key.
	Mismatch *Refusal `json:"-"`
	// InFlight is the answer to a repeat while the first still executes;
	// nil when the repeat executes too.
	InFlight *Refusal `json:"-"`
	// RefundLimit is the refusal of a refund that would take a charge
	// past what was captured.
	RefundLimit Refusal `json:"refund_limit"`
}

// Assumption is a field the provider's own pages leave open, and why the
// profile says what it says.
type Assumption struct {
	Field string `json:"field"`
	Why   string `json:"why"`
}

// KeyRule is where the key travels, how long it may be, and whether a
// request without one is refused.
type KeyRule struct {
	Header    string `json:"header,omitempty"`
	Body      string `json:"body,omitempty"`
	MaxLength int    `json:"max_length"`
	Required  bool   `json:"required,omitempty"`
	// Missing is the refusal of a create without a key, when Required.
	Missing *Refusal `json:"missing,omitempty"`
}

// Where names where the key travels: "header Idempotency-Key".
func (k KeyRule) Where() string {
	if k.Body != "" {
		return "body field " + k.Body
	}
	return "header " + k.Header
}

// Refusal is an error answer the profile documents.
type Refusal struct {
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
	// RetryAfter is, for an in-flight answer, the seconds its Retry-After
	// header names; 0 for none.
	RetryAfter int `json:"retry_after,omitempty"`
}

// String is the refusal in a line: "409 idempotency_key_in_use".
func (r *Refusal) String() string {
	if r == nil {
		return ""
	}
	return strconv.Itoa(r.Status) + " " + r.Code
}

// Saves names which first answers are kept under a key.
type Saves string

// What a profile saves.
const (
	// SavesAll keeps every answer once execution began, 5xx included.
	SavesAll Saves = "all"
	// SavesNo5xx keeps every answer but a 5xx.
	SavesNo5xx Saves = "no_5xx"
	// SavesSuccess keeps 2xx answers only.
	SavesSuccess Saves = "success"
	// SavesNone keeps nothing: keys are ignored.
	SavesNone Saves = "none"
)

// SavesValues lists what saves accepts.
var SavesValues = []Saves{SavesAll, SavesNo5xx, SavesSuccess, SavesNone}

// Replay names what a repeat of a finished request returns.
type Replay string

// What a repeat returns.
const (
	// ReplaySaved returns the first answer as it was saved.
	ReplaySaved Replay = "saved"
	// ReplayCurrent returns the object as it is now.
	ReplayCurrent Replay = "current"
	// ReplayComplete finishes failed or partial work and returns the
	// updated answer.
	ReplayComplete Replay = "complete"
)

// ReplayValues lists what replay accepts.
var ReplayValues = []Replay{ReplaySaved, ReplayCurrent, ReplayComplete}

// Span is a length of wall time, in seconds, written as a count and a
// unit: 30s, 45m, 24h, 31d.
type Span int64

// The units a Span is written in, longest first.
var spanUnits = []struct {
	unit    byte
	seconds int64
}{{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}}

// MaxSpan is the longest span, a hundred years: longer than any provider
// keeps a key, and short enough for nanoseconds in an int64.
const MaxSpan = 36500 * 86400

// ParseSpan reads a span: a whole number above 0 and one of s, m, h, d.
func ParseSpan(s string) (Span, error) {
	const accepted = "a whole number and a unit: s, m, h or d, such as 24h or 31d"
	if len(s) < 2 {
		return 0, fmt.Errorf("retention %q: expected %s", s, accepted)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n < 1 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("retention %q: expected %s", s, accepted)
	}
	for _, u := range spanUnits {
		if s[len(s)-1] == u.unit {
			if n > MaxSpan/u.seconds {
				return 0, fmt.Errorf("retention %q: at most 36500d (a hundred years)", s)
			}
			return Span(n * u.seconds), nil
		}
	}
	return 0, fmt.Errorf("retention %q: expected %s", s, accepted)
}

// String writes the span in its largest whole unit, days from two on:
// 86400 is "24h", 172800 "2d", 90 "90s".
func (s Span) String() string {
	if s <= 0 {
		return ""
	}
	for _, u := range spanUnits {
		if u.unit == 'd' && s < 2*86400 {
			continue
		}
		if int64(s)%u.seconds == 0 {
			return strconv.FormatInt(int64(s)/u.seconds, 10) + string(u.unit)
		}
	}
	return strconv.FormatInt(int64(s), 10) + "s"
}

// Words writes the span for people: "24 h", "31 days".
func (s Span) Words() string {
	switch {
	case s <= 0:
		return "no time"
	case int64(s)%86400 == 0 && s >= 2*86400:
		return strconv.FormatInt(int64(s)/86400, 10) + " days"
	case int64(s)%3600 == 0:
		return strconv.FormatInt(int64(s)/3600, 10) + " h"
	case int64(s)%60 == 0:
		return strconv.FormatInt(int64(s)/60, 10) + " min"
	}
	return strconv.FormatInt(int64(s), 10) + " s"
}

// Millis is the span in milliseconds.
func (s Span) Millis() int64 { return int64(s) * 1000 }

// MarshalText writes the span as ParseSpan reads it.
func (s Span) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a span written by MarshalText.
func (s *Span) UnmarshalText(b []byte) error {
	v, err := ParseSpan(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// RefusalOf is the documented refusal an answer is: what the provider
// did (the action) and what it answered; nil for any other answer.
func (p *Profile) RefusalOf(a Action, resp Response) *Refusal {
	switch {
	case a == Conflict:
		return p.InFlight
	case a == Mismatch:
		return p.Mismatch
	case a == KeyFailed:
		return p.FailedKey
	case a == KeyRequired:
		return p.Key.Missing
	case a == OverLimit, resp.Refused == RefusedOverLimit:
		return &p.RefundLimit
	}
	return nil
}

// Keyless reports whether the profile has no idempotency contract: keys
// are ignored and every executed request is a new effect.
func (p *Profile) Keyless() bool { return p.Saves == SavesNone }

// SameKeySafe reports whether a resend under the same key cannot execute
// twice, whatever the first attempt ended in: the provider keeps every
// answer under the key (a 5xx included, which replay complete finishes
// rather than runs again), and refuses a repeat while the first still
// runs rather than running it too. Inside the retention window, that is;
// a guarded caller checks the window itself.
func (p *Profile) SameKeySafe() bool {
	return p.Saves == SavesAll && p.InFlight != nil
}

// Problem is one thing wrong with a profile: the field, and what is
// wrong with it.
type Problem struct {
	Field string
	Msg   string
}

func (p Problem) Error() string { return p.Field + ": " + p.Msg }

// MaxKeyLength bounds a profile's longest key: no provider documents one
// longer than 255, and serve reads keys of up to 255 characters.
const MaxKeyLength = 255

// Problems lists what is wrong with the profile, field by field, in the
// order of the format; none for a profile the ledger can run.
func (p *Profile) Problems() []Problem {
	var out []Problem
	bad := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if p.ID == "" {
		bad("id", "missing: a profile needs an id (lower-case letters, digits and dashes)")
	}
	if p.Title == "" {
		bad("title", "missing: a profile needs a title")
	}
	if p.Summary == "" {
		bad("summary", "missing: a profile needs a one-line summary")
	}
	if len(p.Docs) == 0 {
		bad("docs", "missing: name at least one page the profile was written from")
	}
	switch {
	case p.Key.Header == "" && p.Key.Body == "":
		bad("key", "say where the key travels: header: NAME or body: FIELD")
	case p.Key.Header != "" && p.Key.Body != "":
		bad("key", "the key travels in one place: header or body, not both")
	}
	if p.Key.MaxLength < 1 || p.Key.MaxLength > MaxKeyLength {
		bad("key.max_length", "%d: must be from 1 to %d", p.Key.MaxLength, MaxKeyLength)
	}
	switch {
	case p.Key.Required && p.Key.Missing == nil:
		bad("key.missing", "a required key needs the refusal of a request without one")
	case !p.Key.Required && p.Key.Missing != nil:
		bad("key.missing", "only a required key has a refusal for a request without one (set required: true, or remove missing)")
	}
	if p.Key.Missing != nil {
		out = append(out, p.Key.Missing.problems("key.missing", false)...)
	}
	if !isOneOf(p.Saves, SavesValues) {
		bad("saves", "%q: accepted: all, no_5xx, success, none", p.Saves)
	}
	switch {
	case p.Saves == SavesNone && p.Retention != 0:
		bad("retention", "a profile that saves nothing keeps no key: remove retention")
	case p.Saves != SavesNone && p.Retention <= 0:
		bad("retention", "missing: how long keys are kept, such as 24h or 31d")
	}
	switch {
	case !isOneOf(p.Replay, ReplayValues):
		bad("replay", "%q: accepted: saved, current, complete", p.Replay)
	case p.Replay == ReplayComplete && p.Saves != SavesAll:
		bad("replay", "complete finishes failed work kept under the key, so it needs saves: all (saves is %s)", p.Saves)
	}
	if p.FailedKey != nil {
		out = append(out, p.FailedKey.problems("failed_key.final", false)...)
	}
	if p.Mismatch != nil {
		out = append(out, p.Mismatch.problems("mismatch", false)...)
	}
	if p.InFlight != nil {
		out = append(out, p.InFlight.problems("in_flight", true)...)
	}
	out = append(out, p.RefundLimit.problems("refund_limit", false)...)
	// A client tells the refusals apart by status and code only.
	named := []struct {
		field string
		r     *Refusal
	}{{"key.missing", p.Key.Missing}, {"failed_key.final", p.FailedKey}, {"mismatch", p.Mismatch}, {"in_flight", p.InFlight}, {"refund_limit", &p.RefundLimit}}
	for i, a := range named {
		for _, b := range named[:i] {
			if a.r != nil && b.r != nil && a.r.Code != "" && a.r.Status == b.r.Status && a.r.Code == b.r.Code {
				bad(a.field+".code", "%d %s is also %s's refusal: a client could not tell the two apart; give each its own code", a.r.Status, a.r.Code, b.field)
			}
		}
	}
	for i, a := range p.Assumed {
		if !slicesContains(ProfileFields, a.Field) {
			bad(fmt.Sprintf("assumed[%d].field", i), "%q: accepted: %s", a.Field, strings.Join(ProfileFields, ", "))
		}
		if a.Why == "" {
			bad(fmt.Sprintf("assumed[%d].why", i), "missing: say why the field is assumed")
		}
	}
	return out
}

// ProfileFields are the fields of a profile an assumption may name.
var ProfileFields = []string{"key", "retention", "saves", "replay", "failed_key", "mismatch", "in_flight", "refund_limit"}

// Validate is Problems as one error, or nil.
func (p *Profile) Validate() error {
	probs := p.Problems()
	if len(probs) == 0 {
		return nil
	}
	msgs := make([]string, len(probs))
	for i, pr := range probs {
		msgs[i] = pr.Error()
	}
	return fmt.Errorf("profile %s: %s", p.ID, strings.Join(msgs, "; "))
}

func (r *Refusal) problems(field string, retry bool) []Problem {
	var out []Problem
	if r.Status < 400 || r.Status > 599 {
		out = append(out, Problem{field + ".status", fmt.Sprintf("%d: a refusal's status is from 400 to 599", r.Status)})
	}
	if r.Code == "" {
		out = append(out, Problem{field + ".code", "missing: the error code the provider's answer names"})
	}
	if r.RetryAfter < 0 || r.RetryAfter > 0 && !retry {
		out = append(out, Problem{field + ".retry_after", "only in_flight has retry_after, a whole number of seconds from 1"})
	}
	return out
}

func isOneOf[T comparable](v T, vs []T) bool {
	for _, w := range vs {
		if v == w {
			return true
		}
	}
	return false
}

func slicesContains(vs []string, v string) bool { return isOneOf(v, vs) }

// profileFields is Profile without its methods: the fields written as
// they are.
type profileFields Profile

// profileJSON is a profile as a case carries it: the rules without a
// refusal are written as their words (reusable, ignored, executes), so
// the file says what it means.
type profileJSON struct {
	profileFields
	FailedKey json.RawMessage `json:"failed_key"`
	Mismatch  json.RawMessage `json:"mismatch"`
	InFlight  json.RawMessage `json:"in_flight"`
}

// MarshalJSON writes the profile with its rules' words.
func (p Profile) MarshalJSON() ([]byte, error) {
	j := profileJSON{profileFields: profileFields(p)}
	var err error
	if p.FailedKey == nil {
		j.FailedKey = json.RawMessage(`"reusable"`)
	} else if j.FailedKey, err = json.Marshal(map[string]*Refusal{"final": p.FailedKey}); err != nil {
		return nil, err
	}
	if j.Mismatch, err = refusalOr(p.Mismatch, "ignored"); err != nil {
		return nil, err
	}
	if j.InFlight, err = refusalOr(p.InFlight, "executes"); err != nil {
		return nil, err
	}
	return json.Marshal(j)
}

func refusalOr(r *Refusal, word string) (json.RawMessage, error) {
	if r == nil {
		return json.Marshal(word)
	}
	return json.Marshal(r)
}

// UnmarshalJSON reads a profile written by MarshalJSON. It does not
// validate: a reader calls Validate.
func (p *Profile) UnmarshalJSON(b []byte) error {
	var j profileJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		// The decoder counts from the start of the profile, not of the
		// file it sits in: say what and where by field, not by offset.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("provider.%s: %s where %s is expected", te.Field, te.Value, te.Type)
		}
		return fmt.Errorf("provider: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	*p = Profile(j.profileFields)
	var err error
	if p.FailedKey, err = readRule(j.FailedKey, "failed_key", "reusable", true); err != nil {
		return err
	}
	if p.Mismatch, err = readRule(j.Mismatch, "mismatch", "ignored", false); err != nil {
		return err
	}
	p.InFlight, err = readRule(j.InFlight, "in_flight", "executes", false)
	return err
}

// readRule reads a rule written as its word or as a refusal (under
// "final" for a failed key).
func readRule(raw json.RawMessage, field, word string, final bool) (*Refusal, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("profile: %s is missing (accepted: %q or a refusal)", field, word)
	}
	var w string
	if json.Unmarshal(raw, &w) == nil {
		if w != word {
			return nil, fmt.Errorf("profile: %s %q (accepted: %q or a refusal)", field, w, word)
		}
		return nil, nil
	}
	var r Refusal
	if final {
		var m map[string]*Refusal
		if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 || m["final"] == nil {
			return nil, errors.New(`profile: failed_key must be "reusable" or {"final": a refusal}`)
		}
		r = *m["final"]
	} else if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("profile: %s: %v", field, err)
	}
	return &r, nil
}
