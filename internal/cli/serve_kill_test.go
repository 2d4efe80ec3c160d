package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/serve"
)

var (
	killPoints = flag.Int("kill-points", 200, "how many times TestServeSurvivesKill9 kills serve")
	killSeed   = flag.Uint64("kill-seed", 1, "the seed of TestServeSurvivesKill9's kill schedule")
	killLife   = flag.Duration("kill-life", 15*time.Millisecond, "the longest a serve killed at a random moment lives first")
)

// killClient is a client with stable keys: each intent has one key, and
// it sends the intent again until a reply says the refund succeeded.
type killClient struct {
	url   string
	http  *http.Client
	next  int               // the next intent to start
	acked map[string]string // intent → the refund id a 200 named
	sent  map[string]bool
}

func intentName(n int) string { return fmt.Sprintf("refund-%04d", n) }

// send sends one create for intent and notes a refund acknowledged. It
// returns false when the server did not answer (it is down).
func (c *killClient) send(intent string) bool {
	form := url.Values{"charge": {"ch_" + intent}, "amount": {"4500"}, "metadata[intent]": {intent}}
	req, _ := http.NewRequest(http.MethodPost, c.url+"/v1/refunds", strings.NewReader(form.Encode()))
	req.SetBasicAuth("sk_test_kill", "")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", "key-"+intent)
	c.sent[intent] = true
	resp, err := c.http.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return false
	}
	if resp.StatusCode == http.StatusOK {
		var r struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(body, &r) == nil && r.ID != "" {
			if prev, ok := c.acked[intent]; ok && prev != r.ID {
				panic(fmt.Sprintf("%s was acknowledged as %s, then as %s", intent, prev, r.ID))
			}
			c.acked[intent] = r.ID
		}
	}
	return true
}

// work sends until the server stops answering or n requests are sent:
// the intents not yet acknowledged first, then new ones.
func (c *killClient) work(n int) {
	for sent := 0; sent < n; {
		var pending []string
		for intent := range c.sent {
			if _, ok := c.acked[intent]; !ok {
				pending = append(pending, intent)
			}
		}
		sort.Strings(pending)
		c.next++
		for _, intent := range append(pending, intentName(c.next)) {
			if !c.send(intent) {
				return
			}
			sent++
		}
	}
}

// TestServeSurvivesKill9 runs serve --db as its own process and kills it
// with SIGKILL, again and again: at the known boundaries of a durable
// write (inside the transaction before it commits, after it commits but
// before the reply, after the reply) and at random moments, while a
// stable-key client sends refunds. After each kill it checks the database
// alone: no intent has two refunds, and every refund a reply acknowledged
// is there under the same id. At the end a last serve lets the client
// finish, and every intent has exactly one refund.
func TestServeSurvivesKill9(t *testing.T) {
	db := filepath.Join(t.TempDir(), "refunds.db")
	rng := rand.New(rand.NewPCG(*killSeed, 0))
	client := &killClient{http: &http.Client{Timeout: 3 * time.Second}, acked: map[string]string{}, sent: map[string]bool{}}
	kinds := map[string]int{}
	points := []string{"before-commit", "after-commit", "after-reply", "random"}
	for k := 0; k < *killPoints; k++ {
		point := points[rng.IntN(len(points))]
		env := []string{}
		if point != "random" {
			env = append(env, fmt.Sprintf("REPLAYLAB_FAILPOINT=%s:%d", point, 1+rng.IntN(4)))
		}
		c := startServeEnv(t, env, "--db", db)
		client.url = c.url
		if point == "random" {
			done := make(chan struct{})
			go func() { client.work(1 << 20); close(done) }()
			time.Sleep(time.Duration(rng.Int64N(int64(*killLife/time.Microsecond)+1)) * time.Microsecond)
			_ = c.cmd.Process.Kill()
			c.wait(t)
			<-done
		} else {
			client.work(1 << 20)
			if code := c.wait(t); code != -1 {
				t.Fatalf("kill %d (%s): serve exited %d, not by its failpoint's SIGKILL:\n%s", k, point, code, c.stderr)
			}
		}
		kinds[point]++
		checkDurable(t, db, client, false)
	}
	acked := len(client.acked)
	// A last life without kills: the client finishes every intent.
	c := startServeEnv(t, nil, "--db", db)
	client.url = c.url
	for intent := range client.sent {
		for tries := 0; ; tries++ {
			if _, ok := client.acked[intent]; ok {
				break
			}
			if tries > 5 {
				t.Fatalf("%s is never acknowledged", intent)
			}
			client.send(intent)
		}
	}
	_ = c.cmd.Process.Signal(sigterm)
	if code := c.wait(t); code != 0 {
		t.Fatalf("the last serve exited %d:\n%s", code, c.stderr)
	}
	refunds := checkDurable(t, db, client, true)
	t.Logf("killed serve %d times (seed %d): %d before commit, %d after commit before the reply, %d after the reply, %d at random; %d creates acknowledged across the kills; %d intents, %d refunds, each intent exactly once, no acknowledged refund lost",
		*killPoints, *killSeed, kinds["before-commit"], kinds["after-commit"], kinds["after-reply"], kinds["random"], acked, len(client.sent), refunds)
}

// checkDurable reads the database alone and checks it against what the
// client was told: at most one refund per intent (exactly one when whole
// is set), and every acknowledged refund there with its id. It returns
// how many refunds there are.
func checkDurable(t *testing.T, db string, c *killClient, whole bool) int {
	t.Helper()
	objs, _, err := serve.Durable(db)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string][]ledger.Object{}
	for _, o := range objs {
		per[o.Intent] = append(per[o.Intent], o)
	}
	for intent, os := range per {
		if len(os) > 1 {
			t.Fatalf("%s has %d refunds in the database: %+v", intent, len(os), os)
		}
	}
	for intent, id := range c.acked {
		got := per[intent]
		if len(got) != 1 || got[0].ID.String() != id {
			t.Fatalf("%s was acknowledged as %s, but the database holds %+v", intent, id, got)
		}
	}
	if whole {
		for intent := range c.sent {
			if len(per[intent]) != 1 {
				t.Fatalf("%s has %d refunds at the end", intent, len(per[intent]))
			}
		}
	}
	return len(objs)
}
