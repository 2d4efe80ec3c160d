package serve

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// ControlPrefix is the reserved path prefix of the control endpoint; no
// Stripe path starts with it.
const ControlPrefix = "/_replaylab/"

// Server is the provider as an http.Handler: the Stripe-shaped refunds
// API, and the control endpoint under ControlPrefix.
type Server struct {
	mu     sync.Mutex
	opts   Options
	c      *core
	start  time.Time
	offset int
	mux    *http.ServeMux

	stop     chan struct{}
	stopOnce sync.Once
	// served counts API requests answered; OnServed, when set, is called
	// with the count after each one (outside the lock).
	served   int
	OnServed func(n int)
	// active counts the API requests being answered, under mu, so that
	// Finish waits for the last reply's fate; idle is signalled when it
	// falls to zero.
	active int
	idle   *sync.Cond

	// st is the durable store, nil for a provider in memory. confirmed
	// lists the requests whose reply was written since the last durable
	// write; the next write records them. failed is set once a durable
	// write fails: the ledger in memory is then ahead of the disk, so
	// every request after is refused.
	st        *store
	confirmed []int
	failed    error
	// persisted is what the ledger held at the last durable write: a write
	// stores everything that changed since, including what a clock move
	// made happen where nothing was written (a GET state, a refused read).
	persisted mark
	// OnFatal, when set, is told of a failed durable write: the server
	// must stop, and a restart recovers from what is on disk.
	OnFatal func(error)
	// OnCrash, when set, is called for a create that met crash_after_send,
	// after the refund committed and before the connection closes, with
	// the create's intent. A test rig uses it to kill the client at that
	// moment, so that the client never hears even the close.
	OnCrash func(intent string)
}

// planned is the reply a request is about to get.
type planned struct {
	wire   string
	status int
	err    *apiError
	shown  []missions.EvidenceObject
}

// mark is what the ledger held before a step, to tell what the step
// changed.
type mark struct{ objects, changes int }

func (s *Server) mark() mark {
	return mark{objects: s.c.led.Objects(), changes: len(s.c.session.Changes)}
}

// record writes request i durably, with the reply it is about to get and
// what the step since m changed, in one transaction, before the reply
// leaves. In memory it does nothing. The caller holds mu.
func (s *Server) record(m mark, i int, p planned) error {
	if s.st == nil {
		return nil
	}
	if s.failed != nil {
		return s.failed
	}
	r := s.c.session.Requests[i]
	r.Wire, r.Status, r.Shown, r.Error = p.wire, p.status, p.shown, errorWords(p.err)
	return s.write(logEntry{Request: &r}, m, r.Key)
}

// write appends e to the durable log with the confirmations due and what
// changed since m (objects, and the keys among key and the clock's
// changes). The caller holds mu.
func (s *Server) write(e logEntry, _ mark, key string) error {
	m := s.persisted
	t := touched{}
	for id := m.objects + 1; id <= s.c.led.Objects(); id++ {
		t.objects = append(t.objects, ledger.ObjectID(id))
	}
	if key != "" {
		t.keys = append(t.keys, key)
	}
	for _, ch := range s.c.session.Changes[m.changes:] {
		if ch.Object != 0 {
			t.objects = append(t.objects, ch.Object)
		}
		if ch.Key != "" {
			t.keys = append(t.keys, ch.Key)
		}
	}
	e.Confirmed = s.confirmed
	e.Tick = s.c.led.Now()
	if err := s.st.write(e, t, s.c.led); err != nil {
		s.fail(err)
		return err
	}
	s.confirmed = nil
	s.persisted = s.mark()
	return nil
}

// fail marks the server failed: its memory is ahead of its disk. The
// caller holds mu.
func (s *Server) fail(err error) {
	if s.failed != nil {
		return
	}
	s.failed = err
	if s.OnFatal != nil {
		go s.OnFatal(err)
	}
}

// Err is the durable write that failed, if one did: the session's end is
// then not on disk as it is in memory.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// unrecorded answers a request the provider could not record durably.
func unrecorded(w http.ResponseWriter, err error) {
	replyError(w, &apiError{Status: http.StatusServiceUnavailable, Type: ledger.ErrorAPI,
		Message: "The provider could not record this request durably (" + err.Error() + "); nothing about it is promised. The server is stopping; a restart recovers from what is on disk."})
}

// New returns a provider ready to serve.
func New(o Options) (*Server, error) {
	o = o.withDefaults()
	c, err := newCore(o)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, c: c, start: o.Now(), stop: make(chan struct{})}
	c.session.Started = s.start.UTC().Format(time.RFC3339Nano)
	s.idle = sync.NewCond(&s.mu)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/refunds", s.refunds)
	mux.HandleFunc("/v1/refunds/{id}", s.refund)
	mux.HandleFunc(ControlPrefix, s.control)
	mux.HandleFunc("/", s.unknown)
	s.mux = mux
	return s, nil
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Release ends every held reply now, closing its connection: for a
// server shutting down.
func (s *Server) Release() { s.stopOnce.Do(func() { close(s.stop) }) }

// Finish waits for the requests being answered (a held reply ends when
// its client gives up, or at Release), settles the clock (late commits
// land, pending refunds resolve) and returns the session with its
// verdicts.
func (s *Server) Finish() *export.Session {
	s.mu.Lock()
	for s.active > 0 {
		s.idle.Wait()
	}
	if s.st != nil && s.failed == nil && len(s.confirmed) > 0 {
		// The replies written since the last durable write.
		_ = s.write(logEntry{}, s.mark(), "")
	}
	defer s.mu.Unlock()
	s.syncClock()
	return s.c.settled()
}

// Session is the session so far, unsettled.
func (s *Server) Session() *export.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncClock()
	return s.c.snapshot()
}

// syncClock moves the ledger to the tick the wall clock has reached.
// The caller holds mu.
func (s *Server) syncClock() {
	elapsed := s.opts.Now().Sub(s.start)
	s.c.advanceTo(s.offset + int(elapsed/s.opts.Tick))
}

// Options are the options the server runs under, defaults filled in.
func (s *Server) Options() Options { return s.opts }

// FaultsLeft lists the faults still to come: under "" for a list, per
// intent for a mission.
func (s *Server) FaultsLeft() map[string][]missions.Fixture {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.plan.left()
}

// Close closes the durable store, if there is one.
func (s *Server) Close() error {
	if s.st == nil {
		return nil
	}
	return s.st.close()
}

// done counts an API request answered.
func (s *Server) done() {
	s.mu.Lock()
	s.served++
	n := s.served
	s.mu.Unlock()
	if s.OnServed != nil {
		s.OnServed(n)
	}
}

// reply writes a JSON body with the provider's headers.
func reply(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_ = http.NewResponseController(w).Flush()
}

func replyError(w http.ResponseWriter, e *apiError) { reply(w, e.Status, e.body()) }

func marshal(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}

// principalOf is the API key the request authenticates with: a bearer
// token, or the user of basic auth (curl -u sk_test_...:).
func principalOf(r *http.Request) (string, *apiError) {
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
	return "", &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error",
		Message: "You did not provide an API key. Send any key, e.g. with the header Authorization: Bearer sk_test_123 (curl -u sk_test_123:). The key is the principal the idempotency digest binds."}
}

// keyOf is the request's Idempotency-Key, checked.
func keyOf(r *http.Request) (string, *apiError) {
	vs := r.Header.Values("Idempotency-Key")
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid", Param: "Idempotency-Key",
			Message: "The request carries " + strconv.Itoa(len(vs)) + " Idempotency-Key headers; send one."}
	}
	k := strings.TrimSpace(vs[0])
	if !utf8.ValidString(k) {
		return "", &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid", Param: "Idempotency-Key",
			Message: "The Idempotency-Key is not UTF-8 text; send a UUID or another printable string."}
	}
	if n := utf8.RuneCountInString(k); n > MaxKeyLength {
		return "", &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid", Param: "Idempotency-Key",
			Message: "The Idempotency-Key is " + strconv.Itoa(n) + " characters long; keys for idempotent requests can be at most 255 characters."}
	}
	return k, nil
}

// readForm parses a form-encoded body, bounded.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *apiError) {
	if r.URL.RawQuery != "" {
		return nil, &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid",
			Message: "POST /v1/refunds takes its parameters in the form body, not the URL's query string (" + strconv.Quote(r.URL.RawQuery) + ")."}
	}
	if ct := r.Header.Get("Content-Type"); ct == "" && r.ContentLength != 0 {
		return nil, &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid",
			Message: "The body has no Content-Type, so it was not read; send the parameters form-encoded with Content-Type: application/x-www-form-urlencoded."}
	} else if ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/x-www-form-urlencoded" {
			return nil, &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid",
				Message: "The body is " + strconv.Quote(ct) + "; send the parameters form-encoded (Content-Type: application/x-www-form-urlencoded), as Stripe's v1 API takes them."}
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "parameter_invalid",
				Message: "The request body is over " + strconv.Itoa(MaxBodyBytes>>10) + " KiB; a refund's form is a few hundred bytes."}
		}
		return nil, &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid",
			Message: "The body is not a valid form: " + err.Error() + "."}
	}
	return r.PostForm, nil
}

// busy counts an API request being answered until the function it
// returns is called.
func (s *Server) busy() func() {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.active--; s.active == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}
}

// refunds serves /v1/refunds: create (POST) and list (GET).
func (s *Server) refunds(w http.ResponseWriter, r *http.Request) {
	defer s.busy()()
	switch r.Method {
	case http.MethodPost:
		s.create(w, r)
	case http.MethodGet:
		s.list(w, r)
	default:
		s.badMethod(w, r, "GET, POST")
	}
}

// refund serves /v1/refunds/{id}: retrieve (GET).
func (s *Server) refund(w http.ResponseWriter, r *http.Request) {
	defer s.busy()()
	if r.Method != http.MethodGet {
		s.badMethod(w, r, "GET")
		return
	}
	s.retrieve(w, r)
}

func (s *Server) badMethod(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	e := &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
		Message: "Unrecognized request: " + r.Method + " " + r.URL.Path + " (this path takes " + allow + ")."}
	if strings.HasPrefix(r.URL.Path, ControlPrefix) {
		replyError(w, e)
		return
	}
	s.refuse(w, "", "", e)
}

func (s *Server) unknown(w http.ResponseWriter, r *http.Request) {
	defer s.busy()()
	s.refuse(w, "", "", &apiError{Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: "Unrecognized request URL (" + r.Method + ": " + r.URL.Path + "). The stub serves POST /v1/refunds, GET /v1/refunds, GET /v1/refunds/{id}, and its control endpoint under " + ControlPrefix + "."})
}

// refuse answers a create refused before the fault table, and logs it.
func (s *Server) refuse(w http.ResponseWriter, intent, key string, e *apiError) {
	s.mu.Lock()
	m := s.mark()
	s.syncClock()
	i := s.c.log(export.SessionRequest{Kind: export.RequestRefused, Intent: intent, Key: key})
	err := s.record(m, i, planned{wire: export.WireDelivered, status: e.Status, err: e})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		unrecorded(w, err)
		return
	}
	replyError(w, e)
	s.finish(c, i, export.WireDelivered, e.Status, e, nil)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	principal, e := principalOf(r)
	if e != nil {
		s.refuse(w, "", "", e)
		return
	}
	key, e := keyOf(r)
	if e != nil {
		s.refuse(w, "", "", e)
		return
	}
	form, e := readForm(w, r)
	if e != nil {
		s.refuse(w, "", key, e)
		return
	}
	params, e := decodeRefund(form)
	intent := intentOf(form, s.opts.IntentField)
	if e != nil {
		s.refuse(w, intent, key, e)
		return
	}
	if m := s.opts.Mission; m != nil && intent != "" && !missionHas(m, intent) {
		ids := make([]string, len(m.Intents))
		for i, in := range m.Intents {
			ids[i] = in.ID
		}
		msg := "Intent " + strconv.Quote(intent) + " is not one of mission " + m.ID + "'s intents (" + strings.Join(ids, ", ") + ")"
		if best := missions.Closest(intent, ids); best != "" {
			msg += "; did you mean " + best + "?"
		}
		s.refuse(w, intent, key, &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_invalid", Param: s.opts.IntentField,
			Message: msg + " The mission schedules faults for its own intents only. Nothing was executed."})
		return
	}
	if intent == "" {
		s.refuse(w, "", key, &apiError{Status: 400, Type: "invalid_request_error", Code: "parameter_missing", Param: s.opts.IntentField,
			Message: "Missing " + s.opts.IntentField + ": replaylab serve links each refund to the intent it carries out, to give each intent its verdict. Send " +
				s.opts.IntentField + "=<the logical operation's id>, or start serve with --intent-field naming a field your client sends. Nothing was executed."})
		return
	}

	s.mu.Lock()
	if s.failed != nil {
		s.mu.Unlock()
		unrecorded(w, s.failed)
		return
	}
	m := s.mark()
	s.syncClock()
	i, world, res := s.c.create(intent, key, missions.Digest("refund", principal, params.bound()), params.encode(), s.c.plan.take(intent))
	var (
		status int
		body   []byte
		aerr   *apiError
		shown  []missions.EvidenceObject
	)
	deliver := delivers(world, res)
	if deliver {
		status, aerr, shown = replyTo(res)
		if aerr != nil {
			body = aerr.body()
		} else {
			o, _ := s.c.led.Object(res.Response.Object)
			body = marshal(refundOf(o, res.Response.Status, s.created(o)))
		}
	}
	seq := i + 1
	p := planned{wire: export.WireHeld}
	switch {
	case world.Reply == missions.CallerCrash:
		p.wire = export.WireClosed
	case deliver:
		p = planned{wire: export.WireDelivered, status: status, err: aerr, shown: shown}
	}
	err := s.record(m, i, p)
	c := s.c
	s.mu.Unlock()
	if err != nil {
		unrecorded(w, err)
		return
	}

	switch {
	case world.Reply == missions.CallerCrash:
		if s.OnCrash != nil {
			s.OnCrash(intent)
		}
		s.finish(c, i, export.WireClosed, 0, nil, nil)
		closeConn(w)
		return
	case !deliver:
		wire := s.hold(r)
		s.finish(c, i, wire, 0, nil, nil)
		closeConn(w)
		return
	}
	if r.Context().Err() != nil {
		s.finish(c, i, export.WireGone, 0, nil, nil)
		return
	}
	h := w.Header()
	h.Set("Request-Id", "req_"+strconv.Itoa(seq))
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	if res.Action == ledger.Replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	reply(w, status, body)
	if s.st != nil {
		s.st.fail("after-reply")
	}
	s.finish(c, i, export.WireDelivered, status, aerr, shown)
}

// finish records what the transport did with request i of core c and
// counts it. A core replaced by a reset meanwhile is left alone: the
// request belongs to the session that ended.
func (s *Server) finish(c *core, i int, wire string, status int, e *apiError, shown []missions.EvidenceObject) {
	s.mu.Lock()
	if c != s.c {
		s.mu.Unlock()
		s.done()
		return
	}
	s.c.replied(i, wire, status, e, shown)
	if s.st != nil && wire == export.WireDelivered {
		s.confirmed = append(s.confirmed, i+1)
	}
	s.mu.Unlock()
	s.done()
}

// hold keeps a reply back until the client gives up, the hold runs out or
// the server stops.
func (s *Server) hold(r *http.Request) string {
	t := time.NewTimer(s.opts.Hold)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	case <-s.stop:
	}
	return export.WireHeld
}

// closeConn closes the connection without a response.
func closeConn(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler)
}

// created is the Unix time a refund was created, on the session's clock.
func (s *Server) created(o ledger.Object) int64 {
	return s.start.Add(time.Duration(o.Tick) * s.opts.Tick).Unix()
}

func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	if _, e := principalOf(r); e != nil {
		s.refuse(w, "", "", e)
		return
	}
	raw := r.PathValue("id")
	s.mu.Lock()
	m := s.mark()
	s.syncClock()
	o, found := s.c.retrieve(raw)
	i := s.c.log(export.SessionRequest{Kind: export.RequestRetrieve, Intent: o.Intent, Payload: raw})
	var status int
	var body []byte
	var e *apiError
	var shown []missions.EvidenceObject
	if found {
		status, body = http.StatusOK, marshal(refundOf(o, o.Status, s.created(o)))
		shown = []missions.EvidenceObject{{Object: o.ID, Status: o.Status}}
	} else {
		e = notFound(raw)
		status, body = e.Status, e.body()
	}
	err := s.record(m, i, planned{wire: export.WireDelivered, status: status, err: e, shown: shown})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		unrecorded(w, err)
		return
	}
	reply(w, status, body)
	s.finish(c, i, export.WireDelivered, status, e, shown)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	if _, e := principalOf(r); e != nil {
		s.refuse(w, "", "", e)
		return
	}
	lq, e := parseList(r.URL.Query(), s.opts.IntentField)
	if e != nil {
		s.refuse(w, "", "", e)
		return
	}
	s.mu.Lock()
	m := s.mark()
	s.syncClock()
	page, more, e := s.c.list(lq)
	if e != nil {
		s.mu.Unlock()
		s.refuse(w, lq.intent, "", e)
		return
	}
	out := listJSON{Object: "list", Data: []refundJSON{}, HasMore: more, URL: "/v1/refunds"}
	var shown []missions.EvidenceObject
	for _, o := range page {
		out.Data = append(out.Data, refundOf(o, o.Status, s.created(o)))
		shown = append(shown, missions.EvidenceObject{Object: o.ID, Status: o.Status})
	}
	i := s.c.log(export.SessionRequest{Kind: export.RequestList, Intent: lq.intent, Payload: r.URL.Query().Encode()})
	err := s.record(m, i, planned{wire: export.WireDelivered, status: http.StatusOK, shown: shown})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		unrecorded(w, err)
		return
	}
	reply(w, http.StatusOK, marshal(out))
	s.finish(c, i, export.WireDelivered, http.StatusOK, nil, shown)
}

func missionHas(m *missions.Mission, intent string) bool {
	for _, in := range m.Intents {
		if in.ID == intent {
			return true
		}
	}
	return false
}
