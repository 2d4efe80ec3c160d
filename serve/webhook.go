package serve

// Adyen's webhooks: on Adyen's wire a refund's outcome is told only by a
// REFUND notification, sent once the refund is final (success "true" or
// "false"), signed with HMAC-SHA256 as Adyen signs its standard
// notifications, so that a client's own validator accepts it. Delivery
// meets faults too, in order: lost (never sent), late (sent --delay ticks
// after the outcome), twice (sent two times); then delivered.
//
// Deliveries are not part of the session: the verdicts judge the ledger,
// and a webhook changes nothing in it.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/replaylab/replaylab/ledger"
)

// DefaultWebhookHMAC is the HMAC key notifications are signed with when
// none is given: a test key, 32 bytes in hex, as Adyen's Customer Area
// issues them.
const DefaultWebhookHMAC = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"

// The faults a webhook delivery meets.
const (
	WebhookDelivered = "delivered"
	WebhookLost      = "lost"
	WebhookLate      = "late"
	WebhookTwice     = "twice"
)

// WebhookFaults lists the faults a delivery can meet.
func WebhookFaults() []string {
	return []string{WebhookDelivered, WebhookLost, WebhookLate, WebhookTwice}
}

// CheckWebhook accepts a webhook URL that is http or https on a loopback
// host: serve sends nothing off this machine.
func CheckWebhook(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook %q: give an http or https URL, e.g. http://127.0.0.1:8080/adyen/webhooks", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("webhook %q: the host %s is not loopback; serve sends notifications only to this machine (127.0.0.1, ::1 or localhost)", raw, host)
	}
	return nil
}

// CheckWebhookHMAC accepts an HMAC key in hex, as Adyen shows one.
func CheckWebhookHMAC(key string) error {
	if b, err := hex.DecodeString(key); err != nil || len(b) == 0 || len(b) > 128 {
		return fmt.Errorf("webhook-hmac: give the HMAC key in hex (an even number of 0-9 and A-F, as Adyen's Customer Area shows it, e.g. %s)", DefaultWebhookHMAC)
	}
	return nil
}

// CheckWebhookFault accepts one delivery fault.
func CheckWebhookFault(f string) error {
	if !slices.Contains(WebhookFaults(), f) {
		return fmt.Errorf("webhook fault %q: give %s", f, strings.Join(WebhookFaults(), ", "))
	}
	return nil
}

// Notification is one of Adyen's NotificationRequestItem, the fields
// serve sends.
type Notification struct {
	AdditionalData      map[string]string `json:"additionalData"`
	Amount              adyenAmountJSON   `json:"amount"`
	EventCode           string            `json:"eventCode"`
	EventDate           string            `json:"eventDate"`
	MerchantAccountCode string            `json:"merchantAccountCode"`
	MerchantReference   string            `json:"merchantReference"`
	OriginalReference   string            `json:"originalReference"`
	PspReference        string            `json:"pspReference"`
	Reason              string            `json:"reason"`
	Success             string            `json:"success"`
}

// signingString is what Adyen's HMAC of a notification covers:
// pspReference, originalReference, merchantAccountCode,
// merchantReference, amount value and currency, eventCode and success,
// joined by colons.
func (n Notification) signingString() string {
	return strings.Join([]string{n.PspReference, n.OriginalReference, n.MerchantAccountCode, n.MerchantReference,
		strconv.FormatInt(n.Amount.Value, 10), n.Amount.Currency, n.EventCode, n.Success}, ":")
}

// Sign is the notification's HMAC signature under key (hex), base64.
func (n Notification) Sign(key string) string {
	k, _ := hex.DecodeString(key)
	m := hmac.New(sha256.New, k)
	m.Write([]byte(n.signingString()))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// notificationBody is a notification as Adyen posts it.
func notificationBody(n Notification) []byte {
	type item struct {
		Item Notification `json:"NotificationRequestItem"`
	}
	return marshal(struct {
		Live  string `json:"live"`
		Items []item `json:"notificationItems"`
	}{"false", []item{{n}}})
}

// WebhookStats counts what became of the notifications.
type WebhookStats struct {
	// Due is how many outcomes were due a notification; Sent how many
	// POSTs went out (twice sends two); Accepted how many were answered
	// 2xx; Lost how many a fault dropped.
	Due, Sent, Accepted, Lost int
}

// webhooks sends the REFUND notifications of one server.
type webhooks struct {
	url, key string
	faults   []string
	delay    time.Duration
	client   *http.Client

	// Under the server's lock: the next fault, the refunds already
	// notified, those still pending, and the last refund seen.
	next    int
	pending map[ledger.ObjectID]bool
	seen    int

	mu    sync.Mutex
	stats WebhookStats
	wg    sync.WaitGroup
}

func newWebhooks(o Options) *webhooks {
	if o.Webhook == "" {
		return nil
	}
	key := o.WebhookHMAC
	if key == "" {
		key = DefaultWebhookHMAC
	}
	return &webhooks{url: o.Webhook, key: key, faults: o.WebhookFaults, delay: time.Duration(o.Delay) * o.Tick,
		client: &http.Client{Timeout: 10 * time.Second}, pending: map[ledger.ObjectID]bool{}}
}

// notify queues the notifications due since the last call: every refund
// made or resolved to a final status. The caller holds s.mu.
func (s *Server) notify() {
	wh := s.hooks
	if wh == nil {
		return
	}
	var due []ledger.Object
	for id := wh.seen + 1; id <= s.c.led.Objects(); id++ {
		wh.pending[ledger.ObjectID(id)] = true
	}
	wh.seen = s.c.led.Objects()
	for id := range wh.pending {
		o, ok := s.c.led.Object(id)
		if ok && o.Status.Terminal() {
			delete(wh.pending, id)
			due = append(due, o)
		}
	}
	slices.SortFunc(due, func(a, b ledger.Object) int { return int(a.ID - b.ID) })
	for _, o := range due {
		fault := WebhookDelivered
		if wh.next < len(wh.faults) {
			fault = wh.faults[wh.next]
		}
		wh.next++
		wh.send(s.stop, s.notificationOf(o), fault)
	}
}

// notificationOf is refund o's REFUND notification, signed.
func (s *Server) notificationOf(o ledger.Object) Notification {
	p := parsePayload(o.Payload)
	n := Notification{
		AdditionalData:      map[string]string{},
		Amount:              adyenAmountJSON{Currency: strings.ToUpper(p.Currency), Value: p.Amount},
		EventCode:           "REFUND",
		EventDate:           time.Unix(s.c.created(o), 0).UTC().Format(time.RFC3339),
		MerchantAccountCode: p.Other["merchantAccount"],
		MerchantReference:   p.Other["reference"],
		OriginalReference:   p.Charge,
		PspReference:        adyenID(o.ID),
		Success:             strconv.FormatBool(o.Status == ledger.Succeeded),
	}
	if o.Status != ledger.Succeeded {
		n.Reason = "Refund failed"
	}
	n.AdditionalData["hmacSignature"] = n.Sign(s.hooks.key)
	return n
}

// send delivers n as fault says, in the background.
func (wh *webhooks) send(stop <-chan struct{}, n Notification, fault string) {
	wh.mu.Lock()
	wh.stats.Due++
	if fault == WebhookLost {
		wh.stats.Lost++
	}
	wh.mu.Unlock()
	if fault == WebhookLost {
		return
	}
	body := notificationBody(n)
	times, wait := 1, time.Duration(0)
	switch fault {
	case WebhookTwice:
		times = 2
	case WebhookLate:
		wait = wh.delay
	}
	wh.wg.Add(1)
	go func() {
		defer wh.wg.Done()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-stop:
				t.Stop()
				return
			}
		}
		for range times {
			wh.post(stop, body)
		}
	}()
}

// post sends one notification and counts what came of it.
func (wh *webhooks) post(stop <-chan struct{}, body []byte) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, wh.url, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	wh.mu.Lock()
	wh.stats.Sent++
	wh.mu.Unlock()
	resp, err := wh.client.Do(req)
	if err != nil {
		return
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		wh.mu.Lock()
		wh.stats.Accepted++
		wh.mu.Unlock()
	}
}

// Webhooks counts what became of the notifications so far; the zero
// stats when serve sends none.
func (s *Server) Webhooks() WebhookStats {
	if s.hooks == nil {
		return WebhookStats{}
	}
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return s.hooks.stats
}

// WaitWebhooks waits for the notifications on their way: for a driver
// that settles and then reads what was sent.
func (s *Server) WaitWebhooks() {
	if s.hooks != nil {
		s.hooks.wg.Wait()
	}
}

// watchOutcomes moves the clock on every tick while serve sends
// webhooks, so that a pending refund's outcome is told when it comes,
// whether or not a request arrives.
func (s *Server) watchOutcomes() {
	t := time.NewTicker(s.opts.Tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.lockNow()
			s.notify()
			s.mu.Unlock()
		}
	}
}
