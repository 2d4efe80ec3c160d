// Command wireclient is a refund client for conform's tests that speaks
// each provider's wire (REPLAYLAB_WIRE) from the environment conform
// gives, standard library alone: naive (a new key per attempt, one retry
// after an error) or, with -careful, one key per intent kept in the state
// directory and resent after an error until a reply comes.
package main

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

type intent struct {
	Intent string `json:"intent"`
	Charge string `json:"charge"`
	Amount int64  `json:"amount"`
}

func main() {
	careful := flag.Bool("careful", false, "one key per intent, resent after an error")
	flag.Parse()
	var intents []intent
	if err := json.Unmarshal([]byte(os.Getenv("REPLAYLAB_INTENTS")), &intents); err != nil {
		fmt.Fprintln(os.Stderr, "REPLAYLAB_INTENTS:", err)
		os.Exit(2)
	}
	timeout, _ := strconv.Atoi(os.Getenv("REPLAYLAB_REQUEST_TIMEOUT_MS"))
	c := &http.Client{Timeout: time.Duration(timeout) * time.Millisecond}
	if pemFile := os.Getenv("REPLAYLAB_TLS_CERT"); pemFile != "" {
		pem, err := os.ReadFile(pemFile)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			fmt.Fprintln(os.Stderr, "REPLAYLAB_TLS_CERT:", err)
			os.Exit(2)
		}
		c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	for _, in := range intents {
		key := newKey()
		if *careful {
			key = keptKey(in.Intent)
		}
		belief := "failed"
		for attempt := 0; attempt < 20; attempt++ {
			if !*careful && attempt > 0 {
				key = newKey()
			}
			status, err := send(c, in, key)
			fmt.Fprintf(os.Stderr, "%s attempt %d key %s: %d %v\n", in.Intent, attempt+1, key, status, err)
			if err == nil && status/100 == 2 {
				belief = "done"
				break
			}
			if !*careful && attempt > 0 {
				break
			}
			if err == nil && status/100 == 4 && status != 409 && status != 422 {
				break
			}
			time.Sleep(time.Duration(timeout/10) * time.Millisecond)
		}
		line, _ := json.Marshal(map[string]string{"intent": in.Intent, "belief": belief, "evidence": "the create's answer"})
		fmt.Println(string(line))
	}
}

func newKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keptKey is the intent's key, minted once and kept in the state
// directory across runs.
func keptKey(intent string) string {
	f := filepath.Join(os.Getenv("REPLAYLAB_STATE_DIR"), "key-"+hex.EncodeToString([]byte(intent)))
	if b, err := os.ReadFile(f); err == nil {
		return string(b)
	}
	k := newKey()
	_ = os.WriteFile(f, []byte(k), 0o600)
	return k
}

// send posts the intent's create on the wire, under key.
func send(c *http.Client, in intent, key string) (int, error) {
	base, wire, apiKey := os.Getenv("REPLAYLAB_API_BASE"), os.Getenv("REPLAYLAB_WIRE"), os.Getenv("REPLAYLAB_API_KEY")
	field := os.Getenv("REPLAYLAB_INTENT_FIELD")
	var path, keyHeader string
	body := map[string]any{field: in.Intent}
	switch wire {
	case "adyen":
		path, keyHeader = "/checkout/v71/payments/"+in.Charge+"/refunds", "Idempotency-Key"
		body["merchantAccount"], body["amount"] = "ReplaylabECOM", map[string]any{"currency": "EUR", "value": in.Amount}
	case "paypal":
		path, keyHeader = "/v2/payments/captures/"+in.Charge+"/refund", "PayPal-Request-Id"
		body["amount"] = map[string]any{"currency_code": "USD", "value": fmt.Sprintf("%d.%02d", in.Amount/100, in.Amount%100)}
	case "square":
		path = "/v2/refunds"
		body["idempotency_key"], body["payment_id"], body["amount_money"] = key, in.Charge, map[string]any{"amount": in.Amount, "currency": "USD"}
	case "checkout":
		path, keyHeader = "/payments/"+in.Charge+"/refunds", "Cko-Idempotency-Key"
		body["amount"] = in.Amount
	default:
		return 0, fmt.Errorf("wire %q", wire)
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("X-API-Key", apiKey)
	if keyHeader != "" {
		req.Header.Set(keyHeader, key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
