// Package serve is replaylab's provider on the network: a Stripe-shaped
// refunds API over the ledger, with request-level faults taken from the
// same fixture table the simulated runner uses, so that an engineer can
// point a real client at it and see what the client does to the ledger.
//
// The provider's rules stay in the ledger. This package maps wall-clock
// time onto the ledger's ticks, turns forms into requests and results into
// replies, applies each fault on the wire (a held reply, a closed
// connection), and keeps the session: every request, what the transport
// did with its reply, and the verdicts the provider can reach alone.
package serve

// The network-free core: the ledger, the fault plan, the session's
// requests and what each intent was told, driven by the HTTP and MCP
// sides under the server's lock. Nothing here knows a connection.

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// The bounds of the options, each written once: Validate holds the
// options to them, and the command holds each flag given to the same
// words (with its dashes), so that a value given is never taken for the
// default that zero means here.

// scheduled is the fault a create meets.
type scheduled struct {
	fixture missions.Fixture
	delay   int
	resolve ledger.Status
}

func (s scheduled) execution() ledger.Execution {
	return missions.Worlds[s.fixture].Execution(missions.Step{Delay: s.delay, Resolve: s.resolve})
}

// plan hands out faults: from the list in order, or per intent from the
// mission's schedule; success once they run out.
type plan struct {
	list      []scheduled
	next      int
	perIntent map[string][]scheduled
	used      map[string]int
	// reads are the faults successive reads meet, from the mission or
	// the options; readsTaken counts the reads so far.
	reads      []missions.ReadStep
	readsTaken int
}

func newPlan(o Options) *plan {
	p := &plan{used: map[string]int{}, reads: o.ReadFaults}
	if o.Mission != nil {
		p.reads = o.Mission.Reads
	}
	if o.Mission == nil {
		for _, f := range o.Faults {
			p.list = append(p.list, scheduled{fixture: f, delay: o.Delay, resolve: o.Resolve})
		}
		return p
	}
	p.perIntent = map[string][]scheduled{}
	var add func(st missions.Step)
	add = func(st missions.Step) {
		switch st.Kind() {
		case missions.StepAttempt:
			p.perIntent[st.Attempt] = append(p.perIntent[st.Attempt], scheduled{fixture: st.Fixture, delay: st.Delay, resolve: st.Resolve})
		case missions.StepTogether:
			for _, t := range st.Together {
				add(t)
			}
		}
	}
	for _, st := range o.Mission.Schedule {
		add(st)
	}
	return p
}

func (p *plan) take(intent string) scheduled {
	if p.perIntent != nil {
		q := p.perIntent[intent]
		n := p.used[intent]
		p.used[intent] = n + 1
		if n < len(q) {
			return q[n]
		}
	} else if p.next < len(p.list) {
		p.next++
		return p.list[p.next-1]
	}
	return scheduled{fixture: missions.Success}
}

// takeRead is the fault the next read meets: the next of the list, then
// none.
func (p *plan) takeRead() missions.ReadStep {
	rs := p.nextRead()
	p.readsTaken++
	return rs
}

// nextRead is the fault the next read would meet, not yet taken.
func (p *plan) nextRead() missions.ReadStep {
	if p.readsTaken < len(p.reads) {
		return p.reads[p.readsTaken]
	}
	return missions.ReadStep{}
}

// readsLeft lists the read faults still to come, for the control
// endpoint and the banner.
func (p *plan) readsLeft() []missions.ReadStep {
	return p.reads[min(p.readsTaken, len(p.reads)):]
}

// left lists the faults still to come, for the control endpoint.
func (p *plan) left() map[string][]missions.Fixture {
	out := map[string][]missions.Fixture{}
	if p.perIntent == nil {
		for _, s := range p.list[p.next:] {
			out[""] = append(out[""], s.fixture)
		}
		return out
	}
	for intent, q := range p.perIntent {
		for _, s := range q[min(p.used[intent], len(q)):] {
			out[intent] = append(out[intent], s.fixture)
		}
	}
	return out
}

// core is the provider without the network: the ledger, the faults and
// the session. It is not safe for concurrent use; Server serializes it.
type core struct {
	opts Options
	// trace is the trace context of the request being taken, set under
	// the lock by its handler (lockFor), kept by the request logged next.
	trace string
	led   *ledger.Ledger
	plan  *plan
	// session is the session but its requests, which reqs holds.
	session export.Session
	reqs    requestLog
	// told marks, per intent, the refunds a delivered reply showed
	// succeeded, and the last status a reply showed for the intent.
	told map[string]*told
	// origin maps each live key to the request that executed under it,
	// whose reply a replay repeats (Original-Request).
	origin map[string]int
	// start is the wall-clock time of tick 0, from which a refund's
	// created time is told.
	start time.Time
	// payloads holds one copy of each create string the session keeps
	// (intent, key, digest, payload), so that retries keep it once.
	payloads map[string]string
	// index finds a list's refunds without reading every one.
	index listIndex
	// came lists the intents creates were sent for, in the order they
	// first came (sent marks them), and faultsLogged counts the fault
	// lists the control endpoint set: what the state needs, kept as
	// requests come rather than counted from them all.
	came         []string
	sent         map[string]bool
	faultsLogged int
	// lastCreate is, per intent, the index of its latest create: the one
	// a create for it repeats.
	lastCreate map[string]int
	// answering holds the creates whose reply the provider decided to
	// send and is sending: a create for the same intent that comes now
	// comes after that answer.
	answering map[int]planned
}

type told struct {
	succeeded map[ledger.ObjectID]bool
	last      ledger.Status
	heard     bool
}

func newCore(o Options) (*core, error) {
	o = o.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var captured map[string]int64
	if o.Mission != nil {
		captured = o.Mission.CapturedMinor()
	}
	led, err := ledger.New(ledger.Config{Profile: o.Profile, Retention: o.retentionTicks(), Captured: captured})
	if err != nil {
		return nil, err
	}
	c := &core{opts: o, led: led, plan: newPlan(o), told: map[string]*told{}, origin: map[string]int{}, payloads: map[string]string{}, lastCreate: map[string]int{}, answering: map[int]planned{}, sent: map[string]bool{}, start: o.Now()}
	c.session = export.Session{
		Started: o.Now().UTC().Format(time.RFC3339Nano),
		Mission: o.Mission,
		Settings: export.SessionSettings{
			Contract: o.Contract, Profile: carried(o.Profile), Retention: o.retentionTicks(), TickMillis: o.Tick.Milliseconds(),
			Faults: o.Faults, ReadFaults: o.ReadFaults, IntentField: o.IntentField, MetadataInDigest: !o.MetadataOutsideDigest,
			PayloadUTF8: true,
		},
		Changes: []export.SessionChange{},
	}
	// What a listed late_commit or pending does, for the list and for
	// lists the control endpoint sets later.
	c.session.Settings.Delay, c.session.Settings.Resolve = o.Delay, o.Resolve
	return c, nil
}

// advanceTo moves the ledger's clock to tick t, keeping what it did.
func (c *core) advanceTo(t int) {
	if t <= c.led.Now() {
		return
	}
	for _, ch := range c.led.Advance(t - c.led.Now()) {
		if ch.Kind == ledger.Pruned {
			delete(c.origin, ch.Key)
		}
		c.session.Changes = append(c.session.Changes, export.SessionChange{Tick: ch.Tick, Kind: ch.Kind, Object: ch.Object, Key: ch.Key, Intent: ch.Intent, Status: ch.Status})
	}
}

// settled is the session as it would end if nothing more came: a copy of
// the core with its clock run on until nothing is in motion. The core
// itself does not move, so a durable provider's log stays what happened.
func (c *core) settled() *export.Session {
	out := c.settledView()
	out.Requests = c.reqs.slice()
	out.Source = nil
	return out
}

// settledView is settled with the requests read from the core's log
// rather than copied (Source): for a provider that serves no more.
// Settling moves the clock only: it adds changes and prunes keys, never
// touches a request, so the requests are shared.
func (c *core) settledView() *export.Session {
	cp := *c
	cp.led = c.led.Clone()
	cp.origin = maps.Clone(c.origin)
	cp.index = listIndex{} // its own, should it list
	cp.answering = maps.Clone(c.answering)
	cp.session.Changes = append([]export.SessionChange{}, c.session.Changes...)
	cp.settle()
	out := cp.view()
	out.Tick = c.led.Now()
	out.Settled = true
	return out
}

// settle runs the clock on until nothing is in motion: late commits have
// landed and pending refunds resolved, as a mission's last step does.
func (c *core) settle() {
	for c.led.Busy() {
		v := c.led.View()
		next := c.led.Now() + 1
		for _, f := range v.InFlight {
			next = max(next, f.At)
		}
		for _, o := range v.Objects {
			if o.Status == ledger.Pending {
				next = max(next, o.ResolveAt)
			}
		}
		c.advanceTo(next)
	}
}

// create meets a create with its fault and the ledger: intent, key, the
// digest and payload the ledger binds and keeps, the fault s and the tool
// call that carried it (nil over REST). It
// returns the request's index in the session, the world of its fault and
// the ledger's result (zero when the request never reached the provider).
func (c *core) create(intent, key, digest, payload string, s scheduled, call *export.ToolCall) (int, missions.World, ledger.Result) {
	w := missions.Worlds[s.fixture]
	req := export.SessionRequest{
		Seq: c.reqs.len() + 1, Tick: c.led.Now(), Kind: export.RequestCreate,
		Intent: c.intern(intent), Key: c.intern(key), Digest: c.intern(digest), Payload: c.intern(payload), Fixture: s.fixture, Wire: export.WireOpen,
		Call: call, Traceparent: c.trace,
	}
	c.trace = ""
	if !c.sent[intent] {
		c.sent[intent] = true
		c.came = append(c.came, intent)
	}
	if intent != "" {
		if j, ok := c.lastCreate[intent]; ok {
			prev := c.reqs.get(j)
			if p, ok := c.answering[j]; ok && prev.Wire == export.WireOpen {
				prev.Wire, prev.Status, prev.Error, prev.Shown = p.wire, p.status, p.err.words(), p.shown
			}
			rep := export.RepeatOf(prev, req)
			req.Repeat = &rep
		}
		c.lastCreate[intent] = c.reqs.len()
	}
	if s.fixture == missions.LateCommit || s.fixture == missions.PendingFixture {
		req.Delay = s.delay
	}
	if s.fixture == missions.PendingFixture {
		req.Resolve = s.resolve
	}
	var res ledger.Result
	if !w.Reaches {
		req.Provider = "not_reached"
	} else {
		ex := s.execution()
		if c.opts.Mission != nil && len(c.opts.Mission.Captured) > 0 {
			// What the refund takes from its charge's capture, read
			// back from the payload, as a replay reads it.
			p := parsePayload(payload)
			ex.Refund = &ledger.Refund{Charge: cmp.Or(p.Charge, p.PaymentIntent), Amount: p.Amount}
		}
		res = c.led.Submit(ledger.Request{Intent: intent, Key: req.Key, Digest: req.Digest, Payload: req.Payload}, ex)
		req.Provider = string(res.Action)
		resp := res.Response
		req.Response = &resp
		if key != "" && (res.Action == ledger.Committed || res.Action == ledger.Executing) && !c.opts.Profile.Keyless() {
			c.origin[key] = req.Seq
		}
	}
	return c.reqs.add(req), w, res
}

// encode is a create's or an update's payload in the session's form
// (SessionSettings.PayloadUTF8).
func (c *core) encode(p refundParams) string { return c.encodeForm(p.digested(true)) }

// encodeForm is encode of the parameters m, every one by name.
func (c *core) encodeForm(m map[string]string) string {
	if c.session.Settings.PayloadUTF8 {
		return encodeForm(m)
	}
	return encodeEscapedForm(m)
}

// intern returns the session's copy of a create's string (its intent,
// key, digest or payload), so that the retries of one request, the
// ledger's record and its object share one copy.
func (c *core) intern(v string) string {
	if p, ok := c.payloads[v]; ok {
		return p
	}
	c.payloads[v] = v
	return v
}

// created is the Unix time a refund was created, on the session's clock.
func (c *core) created(o ledger.Object) int64 {
	return c.start.Add(time.Duration(o.Tick) * c.opts.Tick).Unix()
}

// MaxReadPayload is the most of a read's query (a refund id, a list's
// filters) the session keeps. A longer id names no refund, and a longer
// query is kept cut, marked so; replay takes what the reply showed as
// recorded. It bounds what a session keeps per read.
const MaxReadPayload = 64

// logRead logs a read (a retrieve, a list) with its query and the intent
// it names, each cut to MaxReadPayload.
func (c *core) logRead(kind, intent, query string) int {
	return c.log(readRequest(kind, intent, query))
}

// readRequest is a read as the session keeps it: its query and intent
// each cut to MaxReadPayload, and marked cut when either was.
func readRequest(kind, intent, query string) export.SessionRequest {
	r := export.SessionRequest{Kind: kind, Intent: intent, Payload: query}
	if len(query) > MaxReadPayload {
		r.Payload, r.Cut = termtext.Shorten(query, MaxReadPayload), true
	}
	if len(intent) > MaxReadPayload {
		r.Intent, r.Cut = termtext.Shorten(intent, MaxReadPayload), true
	}
	return r
}

// retrieveLogged finds the refund a retrieve names, as the read's fault
// shows it, and logs the read with its fault.
func (c *core) retrieveLogged(raw string) (int, ledger.Object, bool, missions.ReadWorld) {
	rs := c.plan.takeRead()
	world := rs.World()
	o, found := c.retrieveSeen(raw, world)
	i := c.logRead(export.RequestRetrieve, o.Intent, raw)
	c.readFaulted(i, rs)
	return i, o, found, world
}

// retrieveSeen is the refund raw names as a read that met world sees
// it: one not there yet, as a lagging read sees it, is not found, though
// the read is still the refund's intent's, for the session.
func (c *core) retrieveSeen(raw string, world missions.ReadWorld) (ledger.Object, bool) {
	o, found := c.retrieve(raw)
	if !found {
		return o, false
	}
	if seen, ok := world.Sees(o, c.led.Now()); ok {
		return seen, true
	}
	return ledger.Object{Intent: o.Intent}, false
}

// listLogged is the page a list selects, as the read's fault shows the
// ledger, with the read logged with its fault; a refused list is not
// logged (the caller refuses it).
func (c *core) listLogged(lq listQuery, query string) (int, []ledger.Object, bool, missions.ReadWorld, *refusal) {
	// A list refused (a cursor it does not hold) is logged as refused
	// and takes no read fault, here and in a replay alike.
	rs := c.plan.nextRead()
	world := rs.World()
	page, more, e := c.listSeen(lq, world)
	if e != nil {
		return 0, nil, false, world, e
	}
	c.plan.takeRead()
	i := c.logRead(export.RequestList, lq.intent, query)
	c.readFaulted(i, rs)
	return i, page, more, world, nil
}

// readFaulted marks request i with the fault the read met.
func (c *core) readFaulted(i int, rs missions.ReadStep) {
	if rs.Fault == "" || rs.Fault == missions.ReadOK {
		return
	}
	r := c.reqs.get(i)
	r.ReadFault, r.Delay = rs.Fault, rs.Lag
	c.reqs.set(i, r)
}

// readError is the reply of a read that met read_server_error.
func readError() *refusal {
	return refuse(refusedProviderError, "", "The refunds could not be read just now (a fault under test: read_server_error); this reply shows nothing about them. Try again.")
}

// update sets or clears metadata fields of the refund raw names and logs
// the request; changes maps a field to its new value, "" to clear it, and
// the field "" clears them all first.
func (c *core) update(raw string, changes map[string]string) (int, ledger.Object, *refusal) {
	o, found := c.retrieve(raw)
	if !found {
		return c.refused(), o, notFound(raw)
	}
	p := parsePayload(o.Payload)
	if e := keepsIntentField(c.opts.IntentField, p.Metadata, changes); e != nil {
		return c.refused(), o, e
	}
	if _, all := changes[""]; all {
		clear(p.Metadata)
	}
	for k, v := range changes {
		switch {
		case k == "":
		case v == "":
			delete(p.Metadata, k)
		default:
			p.Metadata[k] = v
		}
	}
	if len(p.Metadata) > MaxMetadata {
		e := invalidParam("metadata", "Metadata can have up to 50 keys, but the refund would have "+strconv.Itoa(len(p.Metadata))+".")
		return c.refused(), o, e
	}
	i := c.log(export.SessionRequest{Kind: export.RequestUpdate, Intent: o.Intent, Payload: c.intern(updatePayload(raw, changes))})
	c.led.Amend(o.ID, c.encode(p))
	o, _ = c.led.Object(o.ID)
	return i, o, nil
}

// refused logs an update the provider refused (no such refund, a field it
// keeps, too many fields) as a refused request: it changed nothing, so
// the session keeps its answer, not its changes.
func (c *core) refused() int {
	return c.log(export.SessionRequest{Kind: export.RequestRefused})
}

// keepsIntentField refuses an update that would change or clear the
// metadata field that links a refund to its intent (field, when it is a
// metadata field): the provider judges each refund by the intent it was
// created for. Sending the field again with its value is no change, and
// clearing every field while sending it again keeps it.
func keepsIntentField(field string, now, changes map[string]string) *refusal {
	name, ok := metadataField(field)
	if !ok {
		return nil
	}
	v, one := changes[name]
	_, all := changes[""]
	same := one && v == now[name]
	if (!one || same) && (!all || same) {
		return nil
	}
	return invalidParam(field, "This update would change or clear "+field+", which links the refund to its intent; replaylab serve judges each refund by the intent it was created for, so that field keeps its value. Update the other metadata fields by name.")
}

// cancel cancels the pending refund raw names and logs the request.
func (c *core) cancel(raw string) (int, ledger.Object, *refusal) {
	o, found := c.retrieve(raw)
	i := c.log(export.SessionRequest{Kind: export.RequestCancel, Intent: o.Intent, Payload: termtext.Shorten(raw, MaxReadPayload)})
	if !found {
		return i, o, notFound(raw)
	}
	if !c.led.Cancel(o.ID) {
		return i, o, refuse(refusedRequest, "refund", "Refund "+o.ID.String()+" is "+o.Status.String()+", so it cannot be canceled: only a refund still pending can be. Read it to see how it ended.")
	}
	o, _ = c.led.Object(o.ID)
	return i, o, nil
}

// setFaults makes faults the ones the next creates meet, and logs the
// change.
func (c *core) setFaults(faults []missions.Fixture) {
	reads, taken := c.plan.reads, c.plan.readsTaken
	c.plan = newPlan(Options{Faults: faults, Delay: c.opts.Delay, Resolve: c.opts.Resolve})
	// The reads' faults are the start's, and go on where they were.
	c.plan.reads, c.plan.readsTaken = reads, taken
	i := c.log(export.SessionRequest{Kind: export.RequestFaults, Payload: faultsPayload(faults)})
	c.faultsLogged++
	r := c.reqs.get(i)
	r.Wire, r.Status = export.WireDelivered, 200
	c.reqs.set(i, r)
}

// setCall sets the tool call of request i.
func (c *core) setCall(i int, call *export.ToolCall) {
	r := c.reqs.get(i)
	r.Call = call
	c.reqs.set(i, r)
}

// log adds a request that did not reach the fault table (a read, a
// refused create) and returns its index.
func (c *core) log(r export.SessionRequest) int {
	r.Traceparent, c.trace = c.trace, ""
	r.Seq = c.reqs.len() + 1
	r.Tick = c.led.Now()
	r.Wire = export.WireOpen
	return c.reqs.add(r)
}

// foldable reports whether request i, the last one logged, is the
// request before it again answered alike (alike), as a answers it (its
// wire, status, error and refunds shown). Nothing changes: fold does
// that, once the count is durable.
func (c *core) foldable(i int, a planned) bool {
	if i == 0 || i != c.reqs.len()-1 {
		return false
	}
	r, q := c.reqs.get(i), c.reqs.get(i-1)
	r.Wire, r.Status, r.Shown, r.Error = a.wire, a.status, a.shown, a.err.words()
	if p, ok := c.answering[i-1]; ok {
		// Decided and on its way: it is as its reply will be.
		q.Wire, q.Status, q.Shown, q.Error = p.wire, p.status, p.shown, p.err.words()
	}
	return alike(q, r)
}

// fold counts request i, the last one logged and foldable, on the one
// before it, and drops it.
func (c *core) fold(i int) {
	delete(c.answering, i)
	c.reqs.pop()
	c.reqs.again(i-1, 1)
}

// again counts n more requests alike request i on it, as a recorded
// session or the durable log holds them: a read takes n steps of the read
// faults, as the reads it counts took one each when they came. It reports
// false, and counts nothing, when request i is not one a count is kept on
// (a read that met a fault, a create) or when a read fault falls among
// the steps the reads it counts would take: they were answered alike, so
// none met one.
// However their replies went, the requests counted are taken as that
// request's were: with a --db reopened after a crash, a reply not known
// to have been written is gone, and so are the ones counted on it.
func (c *core) again(i, n int) bool {
	if i < 0 || i >= c.reqs.len() {
		return false
	}
	r := c.reqs.get(i)
	if n < 0 || n > math.MaxInt32-r.Again || !export.CountsAgain(r.Kind) || r.ReadFault != "" {
		return false
	}
	if r.Kind != export.RequestRefused {
		p := c.plan
		for k := p.readsTaken; k < min(p.readsTaken+n, len(p.reads)); k++ {
			if f := p.reads[k].Fault; f != "" && f != missions.ReadOK {
				return false
			}
		}
		p.readsTaken += n
	}
	c.reqs.again(i, n)
	return true
}

// replied records what the transport did with request i's reply: the wire,
// the HTTP status and error, and the refunds it showed.
func (c *core) replied(i int, wire string, status int, apiErr *refusal, shown []missions.EvidenceObject) {
	delete(c.answering, i)
	r := c.reqs.get(i)
	r.Wire, r.Status, r.Shown, r.Error = wire, status, shown, apiErr.words()
	c.reqs.set(i, r)
	if wire == export.WireDelivered {
		c.hear(&r)
	}
}

// hear notes what a delivered reply told the client about an intent.
func (c *core) hear(r *export.SessionRequest) {
	if r.Intent == "" && len(r.Shown) == 0 {
		return
	}
	for _, o := range r.Shown {
		owner := r.Intent
		if r.Kind != export.RequestCreate {
			// A read tells whoever owns the refund it shows.
			if obj, ok := c.led.Object(o.Object); ok {
				owner = obj.Intent
			}
		}
		t := c.toldOf(owner)
		t.heard = true
		t.last = o.Status
		if o.Status == ledger.Succeeded {
			t.succeeded[o.Object] = true
		}
	}
	if r.Kind == export.RequestCreate {
		t := c.toldOf(r.Intent)
		t.heard = true
		if len(r.Shown) == 0 {
			t.last = ledger.Failed
		}
	}
}

func (c *core) toldOf(intent string) *told {
	t := c.told[intent]
	if t == nil {
		t = &told{succeeded: map[ledger.ObjectID]bool{}}
		c.told[intent] = t
	}
	return t
}

// intents lists the intents a create was sent for: in the order the
// mission names them, then in the order they first came. A mission's
// intent that no create was sent for has no verdict.
func (c *core) intents() []string {
	if c.opts.Mission == nil {
		return c.came
	}
	var out []string
	named := map[string]bool{}
	for _, in := range c.opts.Mission.Intents {
		if c.sent[in.ID] && !named[in.ID] {
			out = append(out, in.ID)
			named[in.ID] = true
		}
	}
	for _, id := range c.came {
		if !named[id] {
			out = append(out, id)
		}
	}
	return out
}

// outcomeAnswered is the outcome with the replies being sent counted as
// heard: a client can read its reply before the provider has recorded it
// written, and a look at the state then must not show what the reply has
// already left behind (a hidden_effect the client was just told of).
func (c *core) outcomeAnswered() missions.Outcome {
	if len(c.answering) == 0 {
		return c.outcome()
	}
	saved := c.told
	c.told = make(map[string]*told, len(saved))
	for k, t := range saved {
		c.told[k] = &told{succeeded: maps.Clone(t.succeeded), last: t.last, heard: t.heard}
	}
	for _, i := range slices.Sorted(maps.Keys(c.answering)) {
		p := c.answering[i]
		r := c.reqs.get(i)
		r.Wire, r.Status, r.Shown = p.wire, p.status, p.shown
		c.hear(&r)
	}
	out := c.outcome()
	c.told = saved
	return out
}

// outcome is what the provider can say of each intent from its own
// records and what its replies told the client:
//   - duplicate: more than one effect;
//   - exactly_once: one effect, and a delivered reply showed it succeeded;
//   - hidden_effect: an effect whose success no reply carried to the client;
//   - phantom: no effect of its own, but a reply told it of another
//     intent's refund as its own;
//   - failed_cleanly: no effect, and the client heard only errors.
func (c *core) outcome() missions.Outcome {
	snap := c.led.View() // read only: no copy
	o := missions.Outcome{Effects: snap.Effects, Verdicts: []missions.IntentVerdict{}}
	live := map[string][]ledger.ObjectID{}
	for _, obj := range snap.Objects {
		if obj.Status == ledger.Succeeded {
			o.Succeeded++
		}
		if obj.Status.Stands() {
			live[obj.Intent] = append(live[obj.Intent], obj.ID)
		}
	}
	ids := c.intents()
	o.Intended = len(ids)
	for _, id := range ids {
		t := c.told[id]
		b := missions.BelievesUnknown
		switch {
		case t == nil:
		case len(t.succeeded) > 0:
			b = missions.BelievesDone
		case t.last == ledger.Pending:
			b = missions.BelievesPending
		case t.heard:
			b = missions.BelievesFailed
		}
		own := live[id]
		v := missions.Judge(b, len(own))
		if v == missions.ExactlyOnce && !t.succeeded[own[0]] {
			// Told of a success, but of another refund than its one
			// effect: the effect itself never reached the client.
			v = missions.HiddenEffect
		}
		o.Verdicts = append(o.Verdicts, missions.IntentVerdict{Intent: id, Verdict: v, Effects: len(own), Belief: b})
	}
	return o
}

// view is the session as it stands, its requests read from the core's
// log (Source), not copied: valid only until the core moves on.
func (c *core) view() *export.Session {
	s := c.session
	s.Tick = c.led.Now()
	s.Ledger = c.led.View()
	s.Outcome = c.outcome()
	s.Source = c.reqs.all()
	return &s
}

// snapshot is the session as it stands, with its ledger and outcome.
func (c *core) snapshot() *export.Session {
	s := c.session
	s.Requests = c.reqs.slice()
	s.Changes = append([]export.SessionChange{}, s.Changes...)
	s.Tick = c.led.Now()
	s.Ledger = c.led.Snapshot()
	s.Outcome = c.outcome()
	return &s
}

// list is the page of refunds a list request selects, newest first, and
// whether more follow.
func (c *core) list(lq listQuery) ([]ledger.Object, bool, *refusal) {
	return c.listSeen(lq, missions.ReadStep{}.World())
}

// listSeen is list with the ledger as a read that met world sees it, in
// time proportional to the page and the refunds it passes over to reach
// it: the refunds of the filter it names (listIndex), newest first, and
// no further than the page needs.
func (c *core) listSeen(lq listQuery, world missions.ReadWorld) ([]ledger.Object, bool, *refusal) {
	if lq.after != "" && lq.before != "" {
		return c.listScan(lq, world)
	}
	c.index.sync(c.led)
	ids := c.index.candidates(lq)
	now := c.led.Now()
	// ring keeps the last limit+1 refunds matched (ending_before wants
	// those just before its cursor); out the page from starting_after on.
	var out []ledger.Object
	found := lq.after == "" && lq.before == ""
	for k := len(ids) - 1; k >= 0; k-- {
		id := ids[k]
		o0, ok := c.led.Object(id)
		if !ok {
			continue
		}
		o, seen := world.Sees(o0, now)
		if !seen || !c.index.matches(id, o, lq) {
			continue
		}
		if created := c.created(o); created < lq.from || created > lq.to {
			continue
		}
		switch {
		case lq.before != "":
			if o.ID.String() == lq.before {
				found = true
			}
		case lq.after != "" && !found:
			if o.ID.String() == lq.after {
				found = true
			}
			continue
		}
		if lq.before != "" && found {
			break
		}
		out = append(out, o)
		if lq.before != "" && len(out) > lq.limit+1 {
			out = out[1:]
		}
		if lq.before == "" && len(out) > lq.limit {
			break
		}
	}
	switch {
	case lq.after != "" && !found:
		return nil, false, cursorMissing("starting_after", lq.after)
	case lq.before != "" && !found:
		return nil, false, cursorMissing("ending_before", lq.before)
	}
	more := len(out) > lq.limit
	if more {
		if lq.before != "" {
			out = out[len(out)-lq.limit:]
		} else {
			out = out[:lq.limit]
		}
	}
	return out, more, nil
}

// listScan is listSeen the long way: every refund read, filtered, then
// paged. It serves a list paged from both ends, and is the reference the
// tests hold listSeen to.
func (c *core) listScan(lq listQuery, world missions.ReadWorld) ([]ledger.Object, bool, *refusal) {
	v := c.led.View()
	var all []ledger.Object
	for i := len(v.Objects) - 1; i >= 0; i-- {
		o, seen := world.Sees(v.Objects[i], c.led.Now())
		if !seen {
			continue
		}
		p := parsePayload(o.Payload)
		created := c.created(o)
		if (lq.charge == "" || p.Charge == lq.charge) &&
			(lq.paymentIntent == "" || p.PaymentIntent == lq.paymentIntent) &&
			(lq.intent == "" || o.Intent == lq.intent) &&
			lq.from <= created && created <= lq.to {
			all = append(all, o)
		}
	}
	// starting_after and ending_before page by id.
	from, to := 0, len(all)
	for j, o := range all {
		if lq.after != "" && o.ID.String() == lq.after {
			from = j + 1
		}
		if lq.before != "" && o.ID.String() == lq.before {
			to = j
		}
	}
	if lq.after != "" && from == 0 {
		return nil, false, cursorMissing("starting_after", lq.after)
	}
	if lq.before != "" && to == len(all) {
		return nil, false, cursorMissing("ending_before", lq.before)
	}
	page := all[from:to]
	more := len(page) > lq.limit
	if more {
		if lq.before != "" {
			page = page[len(page)-lq.limit:]
		} else {
			page = page[:lq.limit]
		}
	}
	return page, more, nil
}

// cursorMissing answers a list paged from a refund the filter does not
// hold.
func cursorMissing(param, id string) *refusal {
	return refuse(refusedNotFound, param, "No such refund among those listed: "+strconv.Quote(id)+"; page from the id of a refund the list gave.")
}

// retrieve is the refund a retrieve request names, if there is one.
func (c *core) retrieve(raw string) (ledger.Object, bool) {
	var id ledger.ObjectID
	if len(raw) > 24 || id.UnmarshalText([]byte(raw)) != nil || id.String() != raw {
		// Only the id as the provider writes it names a refund.
		return ledger.Object{}, false
	}
	return c.led.Object(id)
}
