package serve

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// State is what GET /_replaylab/state answers: where the provider stands.
type State struct {
	Tick    int `json:"tick"`
	Effects int `json:"effects"`
	Objects int `json:"objects"`
	// Requests counts the API requests received (not control requests).
	Requests int `json:"requests"`
	// FaultsLeft lists the faults still to come: under "" for a list,
	// per intent for a mission.
	FaultsLeft map[string][]missions.Fixture `json:"faults_left"`
	// ReadFaultsLeft lists the faults the next reads meet, in order.
	ReadFaultsLeft []missions.ReadStep `json:"read_faults_left,omitempty"`
	// Verdicts are the verdicts if the session ended now, unsettled.
	Verdicts []missions.IntentVerdict `json:"verdicts"`
}

// control serves the control endpoint:
//
//	GET  /_replaylab/state    where the provider stands
//	GET  /_replaylab/session  the session so far, as --record writes it
//	POST /_replaylab/faults   faults=a,b,c: the faults the next creates meet
//	POST /_replaylab/advance  ticks=N: move the clock on
//	POST /_replaylab/reset    a fresh ledger and session, same settings
func (s *Server) control(w http.ResponseWriter, r *http.Request) {
	what := strings.TrimPrefix(r.URL.Path, ControlPrefix)
	method := map[string]string{"state": http.MethodGet, "session": http.MethodGet, "faults": http.MethodPost, "advance": http.MethodPost, "reset": http.MethodPost}[what]
	switch {
	case method == "":
		replyError(w, refuse(refusedNoRoute, "", "Unknown control "+strconv.Quote(r.URL.Path)+": the control endpoint has GET state, GET session, POST faults, POST advance and POST reset under "+ControlPrefix+"."))
		return
	case r.Method != method:
		s.badMethod(w, r, method)
		return
	}
	var form map[string][]string
	if method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		if err := r.ParseForm(); err != nil {
			replyError(w, invalidParam("", "The body is not a valid form: "+err.Error()+"."))
			return
		}
		form = r.Form
	}
	if what == "session" {
		s.writeSession(w)
		return
	}
	// The reply is made under the lock and written after it, so that a
	// client slow to read it holds up no one else.
	out := &heldReply{header: http.Header{}}
	s.mu.Lock()
	if s.ended {
		replyError(out, refuse(refusedUnavailable, "", "serve is stopping: its session is handed over, and the control endpoint changes nothing now."))
	} else {
		s.controlLocked(out, what, method, form)
	}
	s.mu.Unlock()
	out.sendTo(w)
}

// controlLocked answers a control request; the caller holds mu.
func (s *Server) controlLocked(out http.ResponseWriter, what, method string, form map[string][]string) {
	if s.failed != nil && method == http.MethodPost {
		unrecorded(out, s.failed)
		return
	}
	s.syncClock()
	switch what {
	case "state":
		reply(out, http.StatusOK, marshal(s.c.controlState()))
	case "faults":
		vs, given := form["faults"]
		if e := onlyFields(form, "faults"); e != nil || !given {
			if e == nil {
				e = invalidParam("faults", "Give faults=a,b,c: the fixtures the next creates meet, in order (faults= with nothing clears them).")
			}
			replyError(out, e)
			return
		}
		faults, e := parseFaultList(vs)
		if e != nil {
			replyError(out, e)
			return
		}
		s.c.setFaults(faults)
		if err := s.write(func() (logEntry, string, ledger.ObjectID) {
			r := s.c.lastRequest()
			return logEntry{Request: &r}, "", 0
		}); err != nil {
			unrecorded(out, err)
			return
		}
		if faults == nil {
			faults = []missions.Fixture{} // cleared: an empty list, not null
		}
		reply(out, http.StatusOK, marshal(map[string]any{"faults": faults}))
	case "advance":
		if e := onlyFields(form, "ticks"); e != nil {
			replyError(out, e)
			return
		}
		vs := form["ticks"]
		n, err := 0, error(nil)
		if len(vs) == 1 {
			n, err = strconv.Atoi(vs[0])
		}
		if err == nil && len(vs) == 1 && n >= 1 && n <= 1<<30 && float64(s.c.now()+n)*float64(s.opts.Tick) > float64(maxClock) {
			replyError(out, invalidParam("ticks", "The clock would pass 100 years of ticks; a session needs no more."))
			return
		}
		if len(vs) != 1 || err != nil || n < 1 || n > 1<<30 {
			replyError(out, refuse(refusedNotWhole, "ticks", "Give ticks=N, a whole number of ticks from 1 to 1073741824, to move the clock on."))
			return
		}
		s.offset += n
		s.syncClock()
		if err := s.write(entry(logEntry{Advance: n, Tick: s.c.now()})); err != nil {
			unrecorded(out, err)
			return
		}
		reply(out, http.StatusOK, marshal(map[string]int{"tick": s.c.now()}))
	case "reset":
		c, err := newCore(s.opts)
		if err != nil {
			replyError(out, refuse(refusedProviderError, "", err.Error()))
			return
		}
		start := s.opts.Now()
		if s.st != nil {
			if err := s.st.Reset(s.meta(c, start)); err != nil {
				s.fail(err)
				unrecorded(out, err)
				return
			}
		}
		s.c, s.offset = c, 0
		s.restart(start)
		s.confirmed = nil
		s.persisted = mark{}
		reply(out, http.StatusOK, marshal(map[string]int{"tick": 0}))
	}
}

// SessionTempPrefix names the temporary files GET /_replaylab/session
// is written to (atomicfile.TempPattern): Run sweeps those whose process
// is gone.
const SessionTempPrefix = "replaylab-session-"

// writeSession answers GET /_replaylab/session: the session so far. It
// is written under the lock, a request at a time, to a temporary file, and
// sent from there once the lock is let go: a session of 100,000 requests is
// tens of megabytes of JSON, which this way costs a buffer, and a client
// slow to read it holds up no one else.
func (s *Server) writeSession(w http.ResponseWriter) {
	f, err := os.CreateTemp("", atomicfile.TempPattern(SessionTempPrefix, ".json"))
	if err != nil {
		replyError(w, refuse(refusedProviderError, "", "The session could not be written out: "+err.Error()+"."))
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	s.mu.Lock()
	s.syncClock()
	err = export.WriteSession(f, s.c.view())
	s.mu.Unlock()
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		replyError(w, refuse(refusedProviderError, "", "The session could not be written out: "+err.Error()+"."))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, f)
}

// maxClock bounds how far the control endpoint moves the clock.
const maxClock = 100 * 365 * 24 * time.Hour

// onlyFields refuses a control form with fields it does not take.
func onlyFields(form map[string][]string, names ...string) *refusal {
	for k := range form {
		if !slices.Contains(names, k) {
			return refuse(refusedUnknown, k, "Received unknown parameter: "+k+" (this control takes "+strings.Join(names, ", ")+").")
		}
	}
	return nil
}

// heldReply keeps a reply to write once the lock is let go.
type heldReply struct {
	header http.Header
	status int
	body   []byte
}

func (h *heldReply) Header() http.Header { return h.header }
func (h *heldReply) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}
func (h *heldReply) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	h.body = append(h.body, b...)
	return len(b), nil
}

func (h *heldReply) sendTo(w http.ResponseWriter) {
	for k, v := range h.header {
		w.Header()[k] = v
	}
	w.WriteHeader(max(h.status, http.StatusOK))
	_, _ = w.Write(h.body)
}

// parseFaultList reads faults=a,b,c (or several faults= fields); one
// empty faults= clears the list.
func parseFaultList(values []string) ([]missions.Fixture, *refusal) {
	var out []missions.Fixture
	if len(values) == 1 && strings.TrimSpace(values[0]) == "" {
		return nil, nil
	}
	for _, v := range values {
		for n, word := range strings.Split(v, ",") {
			word = strings.TrimSpace(word)
			if word == "" {
				return nil, invalidParam("faults", "Fault "+strconv.Itoa(n+1)+" of "+strconv.Quote(v)+" is empty; give fixture names separated by commas.")
			}
			if _, err := missions.ParseReadFault(word); err == nil {
				return nil, invalidParam("faults", word+" is a read fault: the faults set here are the next creates'; read faults are set when serve starts, with --faults or a mission's reads.")
			}
			f, err := missions.ParseFixture(word)
			if err != nil {
				return nil, invalidParam("faults", err.Error()+"; these are the next creates' faults (read faults are set when serve starts, with --faults or a mission's reads)")
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// faultsPayload records a fault list as the control endpoint takes it.
func faultsPayload(fs []missions.Fixture) string {
	words := make([]string, len(fs))
	for i, f := range fs {
		words[i] = string(f)
	}
	return url.Values{"faults": {strings.Join(words, ",")}}.Encode()
}
