package serve

// The REST handlers: Stripe's v1 refunds (create, retrieve, list, update,
// cancel) in Stripe's shape, each a turn at the core, the create meeting
// its fault on the wire (createTurn.fateOf).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// reply writes a JSON body with the provider's headers.
func reply(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_ = http.NewResponseController(w).Flush()
}

// jsonType is the Content-Type of every reply, one slice for them all
// (net/http copies a reply's headers before it writes them).
var jsonType = []string{"application/json"}

func replyError(w http.ResponseWriter, e *refusal) { reply(w, e.status(), e.body()) }

func marshal(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}

// principalOf is the API key the request authenticates with: a bearer
// token, or the user of basic auth (curl -u sk_test_...:).
func principalOf(r *http.Request) (string, *refusal) {
	h := r.Header.Get("Authorization")
	switch {
	case strings.HasPrefix(h, "Bearer "):
		if k := strings.TrimSpace(h[len("Bearer "):]); k != "" {
			return k, nil
		}
	case strings.HasPrefix(h, "Basic "):
		if raw, err := base64.StdEncoding.DecodeString(h[len("Basic "):]); err == nil {
			if user, _, _ := strings.Cut(string(raw), ":"); user != "" {
				return user, nil
			}
		}
	}
	return "", refuse(refusedUnauthenticated, "", "You did not provide an API key. Send any key, e.g. with the header Authorization: Bearer sk_test_123 (curl -u sk_test_123:). The key is the principal the idempotency digest binds.")
}

// keyOf is the request's Idempotency-Key, checked. A header sent empty
// or blank is refused: it is not the absence of a key, and taking it as
// none would turn a client's bug into a request with no protection.
//
// The wire is Stripe's, whatever the profile: Idempotency-Key is read
// always, so a Stripe client keeps its key under any provider's contract.
// The header the profile names (Cko-Idempotency-Key, PayPal-Request-Id,
// …) is read too, for a client written for that provider; one request
// carries one key. A key is at most as long as the profile says.
func keyOf(r *http.Request, p *ledger.Profile) (string, *refusal) {
	names := []string{"Idempotency-Key"}
	if p != nil && p.Key.Header != "" && !strings.EqualFold(p.Key.Header, names[0]) {
		names = append(names, p.Key.Header)
	}
	var name string
	var vs []string
	for _, n := range names {
		if got := r.Header.Values(n); len(got) > 0 {
			if len(vs) > 0 {
				return "", refuse(refusedInvalid, n, "The request carries both "+name+" and "+n+"; send the key in one of them.")
			}
			name, vs = n, got
		}
	}
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", refuse(refusedInvalid, name, "The request carries "+strconv.Itoa(len(vs))+" "+name+" headers; send one.")
	}
	k, e := checkKey(vs[0], name, "The "+name+" header", "header")
	if e == nil && p != nil && utf8.RuneCountInString(k) > p.Key.MaxLength {
		return "", refuse(refusedInvalid, name, "The "+name+" header is "+strconv.Itoa(utf8.RuneCountInString(k))+" characters long; "+p.ID+" takes keys of at most "+strconv.Itoa(p.Key.MaxLength)+".")
	}
	return k, e
}

// checkKey checks an idempotency key as sent (vs a header, or a tool's
// argument): one sent blank is refused, as it is not the absence of a key
// and taking it as none would turn a client's bug into a request with no
// protection; so is one that is not UTF-8 or is over MaxKeyLength
// characters. param names it in the error, what in its words, and thing
// what to leave out to send none.
func checkKey(raw, param, what, thing string) (string, *refusal) {
	bad := func(msg string) (string, *refusal) {
		return "", refuse(refusedInvalid, param, msg)
	}
	k := strings.TrimSpace(raw)
	switch {
	case k == "":
		return bad(what + " is empty or blank; send a key (a UUID, or one minted for the intent and kept), or leave the " + thing + " out to send no key.")
	case !utf8.ValidString(k):
		return bad(what + " is not UTF-8 text; send a UUID or another printable string.")
	}
	if n := utf8.RuneCountInString(k); n > MaxKeyLength {
		return bad(what + " is " + strconv.Itoa(n) + " characters long; keys for idempotent requests can be at most 255 characters.")
	}
	return k, nil
}

// readForm parses a form-encoded body, bounded.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *refusal) {
	if r.URL.RawQuery != "" {
		return nil, refuse(refusedInvalid, "", "POST "+termtext.Shorten(r.URL.Path, 200)+" takes its parameters in the form body, not the URL's query string ("+strconv.Quote(termtext.Shorten(r.URL.RawQuery, 200))+").")
	}
	if ct := r.Header.Get("Content-Type"); ct == "" && r.ContentLength != 0 {
		return nil, invalidParam("", "The body has no Content-Type, so it was not read; send the parameters form-encoded with Content-Type: application/x-www-form-urlencoded.")
	} else if ct != "" && ct != formType {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != formType {
			return nil, invalidParam("", "The body is "+strconv.Quote(ct)+"; send the parameters form-encoded (Content-Type: application/x-www-form-urlencoded), as Stripe's v1 API takes them.")
		}
	}
	// Read as net/http's ParseForm reads a form body, without the copy of
	// its values it keeps in Form beside PostForm.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var form url.Values
	if err == nil {
		form, err = url.ParseQuery(string(body))
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, refuse(refusedTooLarge, "", "The request body is over "+strconv.Itoa(MaxBodyBytes>>10)+" KiB, more than any form within Stripe's limits (50 metadata fields of 500 characters, strings of 5000) can be.")
		}
		return nil, invalidParam("", "The body is not a valid form: "+err.Error()+".")
	}
	return form, nil
}

// formType is the one Content-Type a form body comes in.
const formType = "application/x-www-form-urlencoded"

// getPost serves a path that takes GET and POST: /v1/refunds (list,
// create) and /v1/refunds/{id} (retrieve, update).
func (s *Server) getPost(get, post http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer s.busy()()
		switch r.Method {
		case http.MethodGet:
			get(w, r)
		case http.MethodPost:
			post(w, r)
		default:
			s.badMethod(w, r, "GET, POST")
		}
	}
}

// cancel serves /v1/refunds/{id}/cancel (POST).
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	defer s.busy()()
	if r.Method != http.MethodPost {
		s.badMethod(w, r, "POST")
		return
	}
	s.cancelRefund(w, r)
}

func (s *Server) badMethod(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	e := refuse(refusedMethod, "", "Unrecognized request: "+termtext.Shorten(r.Method, 20)+" "+termtext.Shorten(r.URL.Path, 200)+" (this path takes "+allow+").")
	if strings.HasPrefix(r.URL.Path, ControlPrefix) {
		replyError(w, e)
		return
	}
	s.refuse(w, r, "", "", e)
}

func (s *Server) unknown(w http.ResponseWriter, r *http.Request) {
	defer s.busy()()
	if s.wire.name() != WireStripe {
		s.refuse(w, r, "", "", routeWords(r, s.wire))
		return
	}
	s.refuse(w, r, "", "", refuse(refusedNoRoute, "", "Unrecognized request URL ("+r.Method+": "+termtext.Shorten(r.URL.Path, 200)+"). The stub serves "+s.wire.serves()+", and its control endpoint under "+ControlPrefix+"."))
}

// refuse answers a request refused before it reached the ledger, and
// logs it.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, intent, key string, e *refusal) {
	c, i, id, err := s.logRefused(intent, key, e, nil, traceparent(r.Header.Get("traceparent")))
	if err != nil {
		s.unrecorded(w, r, i+1, err)
		return
	}
	s.replyErr(w, r, id, e)
	s.finish(c, i, export.WireDelivered, e.status(), e, nil)
}

// logRefused logs a request refused before it reached the ledger, with
// the tool call that carried it (nil over REST), and records it durably;
// the caller answers it, then calls finish with the core and index it
// returns, with the reply's Request-Id.
func (s *Server) logRefused(intent, key string, e *refusal, call *export.ToolCall, tp string) (*core, int, string, error) {
	s.lockFor(tp)
	defer s.mu.Unlock()
	// A refused request's intent may be anything a client sent: it is
	// kept to its first bytes, as a read's query is.
	r0 := export.SessionRequest{Kind: export.RequestRefused, Intent: intent, Key: key, Call: call}
	if len(intent) > MaxReadPayload {
		r0.Intent, r0.Cut = termtext.Shorten(intent, MaxReadPayload), true
	}
	i, id, err := s.recordAnswer(s.c.log(r0), planned{wire: export.WireDelivered, status: e.status(), err: e})
	return s.c, i, id, err
}

// intentRefused is why a create's intent cannot be taken, or nil: none
// was sent, or a mission is played and it is not one of its intents.
func (s *Server) intentRefused(intent string) *refusal {
	if m := s.opts.Mission; m != nil && intent != "" && !missionHas(m, intent) {
		ids := make([]string, len(m.Intents))
		for i, in := range m.Intents {
			ids[i] = in.ID
		}
		msg := "Intent " + strconv.Quote(intent) + " is not one of mission " + m.ID + "'s intents (" + strings.Join(ids, ", ") + ")"
		if best := termtext.Closest(intent, ids); best != "" {
			msg += "; did you mean " + best + "?"
		}
		return refuse(refusedInvalid, s.opts.IntentField, msg+" The mission schedules faults for its own intents only. Nothing was executed.")
	}
	if intent == "" {
		return refuse(refusedMissing, s.opts.IntentField, "Missing "+s.opts.IntentField+": replaylab serve links each refund to the intent it carries out, to give each intent its verdict. Send "+
			s.opts.IntentField+"=<the logical operation's id>, or start serve with --intent-field naming a field your client sends. Nothing was executed.")
	}
	return nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	principal, e := principalOf(r)
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	key, e := keyOf(r, s.opts.Profile)
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	form, e := readForm(w, r)
	if e != nil {
		s.refuse(w, r, "", key, e)
		return
	}
	params, e := decodeRefund(form)
	intent := intentOf(form, s.opts.IntentField)
	if e == nil {
		e = s.intentRefused(intent)
	}
	if e != nil {
		s.refuse(w, r, intent, key, e)
		return
	}

	req := createRequest{principal: principal, key: key, intent: intent, params: params, trace: traceparent(r.Header.Get("traceparent"))}
	s.createOn(w, r, req, func(t createTurn) []byte {
		return refundBody(refundOf(t.obj, t.res.Response.Status, t.created))
	}, func(h http.Header, t createTurn) {
		if key != "" {
			h.Set("Idempotency-Key", key)
		}
		if t.origin > 0 {
			h.Set("Original-Request", requestID(t.origin))
		}
		if t.res.Action == ledger.Replayed {
			h.Set("Idempotent-Replayed", "true")
		}
	})
}

// hold keeps a reply back until the client gives up (ctx ends; or, for a
// tool call, its POST goes or its session ends: gone and ended, nil when
// there is none), the safety cap (Options.Hold) runs out or the server
// stops.
func (s *Server) hold(ctx context.Context, gone, ended <-chan struct{}) (wire, how string) {
	t := time.NewTimer(s.opts.Hold)
	defer t.Stop()
	capped := false
	select {
	case <-ctx.Done():
	case <-gone:
	case <-ended:
	case <-t.C:
		capped = true
	case <-s.stop:
	}
	// Several can be over at once (a DELETE ends the session and then its
	// calls' contexts; a stop closes the client's connections): the first
	// cause is named.
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return ch != nil
		default:
			return false
		}
	}
	switch {
	case closed(s.stop):
		return export.WireHeld, export.HeldServeStopped
	case closed(ended):
		return export.WireHeld, export.HeldSessionEnded
	case capped:
		return export.WireHeld, export.HeldCap
	}
	// Over REST the context is the connection's; over MCP it ends with the
	// call's cancellation (which heldEnded sees recorded) or its stream.
	return export.WireHeld, export.HeldClientClosed
}

// closeConn closes the connection without a response.
func closeConn(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler)
}

func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	if _, e := principalOf(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	q, e := readQuery(r)
	if e == nil {
		e = onlyExpand(q, "Retrieving a refund takes no parameters.")
	}
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	raw := r.PathValue("id")
	s.lockFor(traceparent(r.Header.Get("traceparent")))
	i, o, found, world := s.c.retrieveLogged(raw)
	if s.heldRead(w, r, i, world) {
		return
	}
	var status int
	var body []byte
	var shown []missions.EvidenceObject
	if world.Code != http.StatusOK {
		e = readError()
		status, body = e.status(), e.body()
	} else if found {
		status, body = http.StatusOK, refundBody(refundOf(o, o.Status, s.c.created(o)))
		shown = shownOf(o)
	} else {
		e = notFound(raw)
		status, body = e.status(), e.body()
	}
	s.answerLocked(w, r, i, status, body, e, shown, 0)
}

// answerLocked records request i with its reply, unlocks, and writes the
// reply: the end of every request but a create. touch names an object
// the request changed (an update, a cancel), for the durable store. The
// caller holds mu.
func (s *Server) answerLocked(w http.ResponseWriter, r *http.Request, i, status int, body []byte, e *refusal, shown []missions.EvidenceObject, touch ledger.ObjectID) {
	i, id, err := s.recordAnswer(i, planned{wire: export.WireDelivered, status: status, err: e, shown: shown, touch: touch})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		s.unrecorded(w, r, i+1, err)
		return
	}
	s.stampID(w, r, id, status, e)
	reply(w, status, body)
	s.finish(c, i, export.WireDelivered, status, e, shown)
}

// onlyExpand refuses every query parameter of a request that takes none
// but expand, and expand itself, which this provider cannot honour.
func onlyExpand(q url.Values, takes string) *refusal {
	for name, vs := range q {
		if e := checkUTF8(name, vs); e != nil {
			return e
		}
		if isExpand(name) {
			return refuseExpand(name, vs)
		}
		return refuse(refusedUnknown, termtext.Shorten(name, 200), "Received unknown parameter: "+termtext.Shorten(name, 200)+". "+takes)
	}
	return nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	if _, e := principalOf(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	q, e := readQuery(r)
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	lq, e := parseList(q, s.opts.IntentField)
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	s.lockFor(traceparent(r.Header.Get("traceparent")))
	i, page, more, world, e := s.c.listLogged(lq, q.Encode())
	if e != nil {
		s.mu.Unlock()
		s.refuse(w, r, lq.intent, "", e)
		return
	}
	if s.heldRead(w, r, i, world) {
		return
	}
	if world.Code != http.StatusOK {
		e := readError()
		s.answerLocked(w, r, i, e.status(), e.body(), e, nil, 0)
		return
	}
	out := listJSON{Object: "list", Data: []refundJSON{}, HasMore: more, URL: "/v1/refunds"}
	var shown []missions.EvidenceObject
	for _, o := range page {
		out.Data = append(out.Data, refundOf(o, o.Status, s.c.created(o)))
		shown = append(shown, shownOf(o)...)
	}
	s.answerLocked(w, r, i, http.StatusOK, listBody(out), nil, shown, 0)
}

// heldRead ends a read that met read_timeout: it is recorded held, its
// reply kept back until the client gives up, and its connection closed.
// It reports whether it did; the caller holds mu, which it releases
// when it does.
func (s *Server) heldRead(w http.ResponseWriter, r *http.Request, i int, world missions.ReadWorld) bool {
	if world.Answered {
		return false
	}
	err := s.record(i, planned{wire: export.WireHeld})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		s.unrecorded(w, r, i+1, err)
		return true
	}
	wire, how := s.hold(r.Context(), nil, nil)
	s.heldEnded(c, i, how)
	s.finish(c, i, wire, 0, nil, nil)
	closeConn(w)
	return true
}

// update serves POST /v1/refunds/{id}: it sets or clears the refund's
// metadata, which is all Stripe lets a refund's update change.
func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	if _, e := principalOf(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	// A key is checked as on a create, but not applied: setting
	// metadata again gives the same refund, so an update needs none.
	if _, e := keyOf(r, s.opts.Profile); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	form, e := readForm(w, r)
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	changes, e := decodeUpdate(form)
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	raw := r.PathValue("id")
	s.lockFor(traceparent(r.Header.Get("traceparent")))
	i, o, e := s.c.update(raw, changes)
	s.answerObject(w, r, i, o, e)
}

// cancelRefund serves POST /v1/refunds/{id}/cancel: a pending refund is
// canceled before it resolves; any other is refused as it stands.
func (s *Server) cancelRefund(w http.ResponseWriter, r *http.Request) {
	if _, e := principalOf(r); e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	form, e := readForm(w, r)
	if e == nil {
		_, e = keyOf(r, s.opts.Profile) // checked as on a create, not applied
	}
	if e == nil {
		e = onlyExpand(form, "Canceling a refund takes no parameters.")
	}
	if e != nil {
		s.refuse(w, r, "", "", e)
		return
	}
	raw := r.PathValue("id")
	s.lockFor(traceparent(r.Header.Get("traceparent")))
	i, o, e := s.c.cancel(raw)
	s.answerObject(w, r, i, o, e)
}

// answerObject ends an update or a cancel: the refund as it now stands,
// or the error. The caller holds mu.
func (s *Server) answerObject(w http.ResponseWriter, r *http.Request, i int, o ledger.Object, e *refusal) {
	if e != nil {
		s.answerLocked(w, r, i, e.status(), e.body(), e, nil, 0)
		return
	}
	shown := shownOf(o)
	s.answerLocked(w, r, i, http.StatusOK, refundBody(refundOf(o, o.Status, s.c.created(o))), nil, shown, o.ID)
}

func missionHas(m *missions.Mission, intent string) bool {
	for _, in := range m.Intents {
		if in.ID == intent {
			return true
		}
	}
	return false
}
