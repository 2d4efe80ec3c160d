package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/missions"
)

// gated serves h through serve's HTTPServer with limits l, on a loopback
// test server.
func gated(t *testing.T, h http.Handler, l Limits) (*httptest.Server, *HTTPServer) {
	t.Helper()
	hs := NewHTTPServerLimits(h, l)
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = hs.Server
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, hs
}

// gatedRig is newRig with the provider behind serve's HTTPServer and l.
func gatedRig(t *testing.T, o Options, l Limits) (*rig, *HTTPServer) {
	t.Helper()
	g := newToolRig(t, o)
	ts, hs := gated(t, g.srv, l)
	g.http = ts
	t.Cleanup(g.srv.Release)
	g.quick = &http.Client{Timeout: 5 * time.Second}
	return g, hs
}

// stall opens a connection that sends a create's headers, declaring a
// body of length bytes, and the first sent bytes of it, then waits.
func stall(t *testing.T, base, path string, length, sent int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ct := "application/x-www-form-urlencoded"
	if path == MCPPath {
		ct = "application/json"
	}
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_test_slow\r\nContent-Type: %s\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", path, ct, length, strings.Repeat("a", sent))
	return c
}

// answerOn reads the reply on c, if one comes within wait.
func answerOn(t *testing.T, c net.Conn, wait time.Duration) (*http.Response, string, error) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

// waitGate waits until n of the connections hs's gate tracks are as
// is says.
func waitGate(t *testing.T, hs *HTTPServer, n int, what string, is func(*gconn) bool) {
	t.Helper()
	for range 500 {
		hs.gate.mu.Lock()
		got := 0
		for _, e := range hs.gate.conns {
			if is(e) {
				got++
			}
		}
		hs.gate.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the gate never had %d connections %s", n, what)
}

func reading(e *gconn) bool { return e.reading }
func busy(e *gconn) bool    { return e.busy }

func TestStalledBodiesGiveWayToNewClients(t *testing.T) {
	t.Run("large", func(t *testing.T) { stalledBodiesGiveWay(t, 100<<10, 0) })
	// A small body counts as stalled once it has been arriving for
	// stallAfter.
	t.Run("small", func(t *testing.T) { stalledBodiesGiveWay(t, 1000, stallAfter) })
}

func stalledBodiesGiveWay(t *testing.T, length int, wait time.Duration) {
	g, hs := gatedRig(t, Options{}, Limits{MaxConns: 4})
	var slow []net.Conn
	for range 4 {
		slow = append(slow, stall(t, g.http.URL, "/v1/refunds", length, 10))
		waitGate(t, hs, len(slow), "reading a body", reading)
	}
	// Each new client cuts the body that has stalled longest: the
	// oldest first.
	fresh := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 3 {
		time.Sleep(wait)
		a := g.do(fresh, http.MethodPost, "/v1/refunds", fmt.Sprintf("probe-%d", i), refund1042())
		if a.err != nil || a.status != 200 {
			t.Fatalf("probe %d behind 4 stalled bodies: %v %d %s", i, a.err, a.status, a.body)
		}
		resp, body, err := answerOn(t, slow[i], 5*time.Second)
		if err != nil {
			t.Fatalf("stalled body %d got no answer when a new client needed its room: %v", i, err)
		}
		var e struct{ Error apiError }
		_ = json.Unmarshal([]byte(body), &e)
		if resp.StatusCode != 503 || !strings.Contains(e.Error.Message, "still arriving") || !strings.Contains(e.Error.Message, "limit of 4 open connections") || !strings.Contains(e.Error.Message, "Nothing of the request was executed") {
			t.Errorf("stalled body %d was answered %d %s", i, resp.StatusCode, body)
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("stalled body %d: a 503 with no Retry-After", i)
		}
		// Once the cut connection and the probe's are closed, the room
		// is taken again by one more stalled body.
		for n := 0; ; n++ {
			hs.gate.mu.Lock()
			open := len(hs.gate.conns)
			hs.gate.mu.Unlock()
			if open == 3 {
				break
			}
			if n == 500 {
				t.Fatalf("%d connections open after a cut, want the 3 stalled", open)
			}
			time.Sleep(5 * time.Millisecond)
		}
		slow = append(slow, stall(t, g.http.URL, "/v1/refunds", length, 10))
		waitGate(t, hs, 4, "reading a body", reading)
	}
	if s := g.srv.Finish(); len(s.Requests) != 3 {
		t.Errorf("%d requests recorded, want the 3 probes: a cut body is never executed", len(s.Requests))
	}
}

func TestABodyPastTheBudgetCutsTheLargest(t *testing.T) {
	g, hs := gatedRig(t, Options{}, Limits{BodyBudget: 100 << 10})
	// 60 KiB in two chunks of room, then a stall.
	first := stall(t, g.http.URL, "/v1/refunds", 80<<10, 60<<10)
	waitGate(t, hs, 1, "reading a body", reading)
	// A small create fits beside it.
	if a := g.create("small-1"); a.status != 200 {
		t.Fatalf("a small create beside one stalled body: %d %s", a.status, a.body)
	}
	// A second large body needs the room the first holds.
	second := stall(t, g.http.URL, "/v1/refunds", 80<<10, 60<<10)

	resp, body, err := answerOn(t, first, 5*time.Second)
	if err != nil {
		t.Fatalf("the oldest body was not cut when a second one needed its room: %v", err)
	}
	if resp.StatusCode != 503 || !strings.Contains(body, "limit of 100 KiB of request bodies held at once, and this body held the most of it") {
		t.Errorf("the oldest body was answered %d %s", resp.StatusCode, body)
	}
	// The second keeps its room and is read once it is all there.
	fmt.Fprint(second, strings.Repeat("a", 20<<10))
	resp, body, err = answerOn(t, second, 5*time.Second)
	if err != nil || resp.StatusCode == 503 {
		t.Fatalf("the body that cut the oldest was not read: %v %s", err, body)
	}
	hs.gate.mu.Lock()
	used := hs.gate.used
	hs.gate.mu.Unlock()
	if used != 0 {
		t.Errorf("%d bytes of the budget still taken with every request answered", used)
	}
}

func TestASlowBodyIsCutAfterBodyTime(t *testing.T) {
	g, _ := gatedRig(t, Options{}, Limits{BodyTime: 200 * time.Millisecond})
	c := stall(t, g.http.URL, "/v1/refunds", 1000, 10)
	resp, body, err := answerOn(t, c, 5*time.Second)
	if err != nil {
		t.Fatalf("a body that stopped arriving was kept past BodyTime: %v", err)
	}
	if resp.StatusCode != 408 || !strings.Contains(body, "did not arrive within 200ms of its headers") {
		t.Errorf("a slow body was answered %d %s", resp.StatusCode, body)
	}
	if resp.Close != true {
		t.Error("a connection whose body was cut is kept open")
	}
}

func TestACutMCPBodyIsAJSONRPCError(t *testing.T) {
	g, _ := gatedRig(t, Options{MCP: true}, Limits{BodyTime: 200 * time.Millisecond})
	c := stall(t, g.http.URL, MCPPath, 1000, 10)
	resp, body, err := answerOn(t, c, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.JSONRPC != "2.0" || m.Error.Code != -32000 || !strings.Contains(m.Error.Message, "did not arrive") {
		t.Errorf("a slow MCP body was answered %d %s", resp.StatusCode, body)
	}
}

func TestConnectionsBeingAnsweredAreNeverCut(t *testing.T) {
	g, hs := gatedRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit, missions.TimeoutAfterCommit}}, Limits{MaxConns: 2})
	held := make(chan answer, 2)
	slowClient := &http.Client{Timeout: 3 * time.Second}
	for i := range 2 {
		go func() {
			held <- g.do(slowClient, http.MethodPost, "/v1/refunds", fmt.Sprintf("held-%d", i), refund1042())
		}()
	}
	waitGate(t, hs, 2, "being answered", busy)
	// Both connections hold a reply back; a third finds no room.
	c, err := net.Dial("tcp", strings.TrimPrefix(g.http.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, body, err := answerOn(t, c, 2*time.Second)
	if err != nil {
		t.Fatalf("a connection past the limit, with every one being answered, got no answer: %v", err)
	}
	if resp.StatusCode != 503 || !strings.Contains(body, "2 connections open, each being answered") {
		t.Errorf("a connection with no room was answered %d %s", resp.StatusCode, body)
	}
	for range 2 {
		if a := <-held; !a.timedOut() {
			t.Errorf("a held reply ended otherwise than by its client's timeout: %v %d", a.err, a.status)
		}
	}
	if hs.Cuts() != 1 {
		t.Errorf("%d cuts, want the one refused", hs.Cuts())
	}
}

func TestBodiesThroughTheGate(t *testing.T) {
	g, _ := gatedRig(t, Options{}, Limits{})
	// Chunked, as a client that streams its form sends it.
	pr, pw := io.Pipe()
	go func() {
		fmt.Fprint(pw, "charge=ch_1&amount=100&")
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(pw, "metadata[intent]=chunked")
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, g.http.URL+"/v1/refunds", pr)
	req.SetBasicAuth("sk_test_rig", "")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"chunked"`) {
		t.Errorf("a chunked create: %d %s", resp.StatusCode, b)
	}
	// Over the limit: the handler's own answer.
	big := url.Values{"charge": {"ch_1"}, "amount": {"100"}, "metadata[note]": {strings.Repeat("d", MaxBodyBytes)}}
	a := g.do(g.quick, http.MethodPost, "/v1/refunds", "", big)
	if a.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(a.body), "over 512 KiB") {
		t.Errorf("a body over the limit: %d %s", a.status, a.body)
	}
	// The largest that fits is read whole.
	fits := url.Values{"charge": {"ch_1"}, "amount": {"100"}, "metadata[intent]": {"fits"}, "metadata[note]": {strings.Repeat("d", 500)}}
	if a := g.do(g.quick, http.MethodPost, "/v1/refunds", "", fits); a.status != 200 {
		t.Errorf("a create within the limits: %d %s", a.status, a.body)
	}
}
