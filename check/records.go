package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/internal/jsontext"
)

// rawRecord is one refund the provider holds, as a records file gives it.
type rawRecord struct {
	line                    int
	id, status, intent, key string
}

// readRecords reads the provider's refunds: the JSON of Stripe's GET
// /v1/refunds list pages (one or more list objects, as curl or the Stripe
// CLI saves them), or a serve session. hasMore says the last page said
// more follow.
func readRecords(path, intentField string, pipeWait time.Duration) (recs []rawRecord, hasMore bool, err error) {
	if err := refuseSpecialAs(path, "a list of refunds (the JSON of GET /v1/refunds) or a serve session"); err != nil {
		return nil, false, err
	}
	data, err := infile.Read(path, export.MaxCaseBytes, "a list of refunds or a serve session", pipeWait)
	if err != nil {
		return nil, false, infile.Error(path, err)
	}
	kind, schema := export.Sniff(data)
	switch kind {
	case export.KindTraces:
		return nil, false, fmt.Errorf("%s holds OpenTelemetry traces; the second file is the provider's records: a list of refunds (the JSON of GET /v1/refunds) or a serve session", path)
	case export.KindCase, export.KindOther:
		return nil, false, fmt.Errorf("%s is a %s document, not the provider's records: give a list of refunds (the JSON of GET /v1/refunds) or a serve session (%s)", path, schema, export.SessionSchemaID)
	}
	if kind == export.KindSession {
		s, err := export.UnmarshalSession(path, data)
		if err != nil {
			return nil, false, err
		}
		for _, o := range s.Ledger.Objects {
			recs = append(recs, rawRecord{id: o.ID.String(), status: o.Status.String(), intent: o.Intent, key: o.Key})
		}
		return recs, false, nil
	}
	if at, what := jsontext.Problem(data); at >= 0 {
		if !utf8.Valid(data) {
			return nil, false, fmt.Errorf("%s:%d: the file is not UTF-8; the JSON of a list of refunds is", path, lineAt(data, int64(at)))
		}
		return nil, false, fmt.Errorf("%s:%d: %s", path, lineAt(data, int64(at)), what)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	pages := 0
	seen := map[rawRecord]bool{}
	for {
		start := d.InputOffset()
		var page struct {
			Object  *string           `json:"object"`
			Data    []json.RawMessage `json:"data"`
			HasMore bool              `json:"has_more"`
		}
		err := d.Decode(&page)
		if errors.Is(err, io.EOF) {
			break
		}
		line := lineAt(data, start)
		if err != nil {
			why := "it does not read as JSON"
			var se *json.SyntaxError
			if errors.As(err, &se) {
				why = se.Error()
			} else if errors.Is(err, io.ErrUnexpectedEOF) {
				why = "it ends inside its JSON (cut short?)"
			} else {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					why = fmt.Sprintf("it holds a JSON %s where a list object is expected", te.Value)
				}
			}
			return nil, false, fmt.Errorf("%s:%d: not a list of refunds: %s; expected the JSON of Stripe's GET /v1/refunds ({\"object\": \"list\", \"data\": [refunds]}) or a serve session", path, line, why)
		}
		if page.Object == nil || *page.Object != "list" || page.Data == nil {
			return nil, false, fmt.Errorf("%s:%d: not a list of refunds: expected the JSON of Stripe's GET /v1/refunds, an object with \"object\": \"list\" and a \"data\" array of refunds, or a serve session", path, line)
		}
		pages++
		hasMore = page.HasMore
		off := start
		for i, raw := range page.Data {
			at := bytes.Index(data[off:], raw)
			if at >= 0 {
				off += int64(at)
			}
			var r struct {
				ID       string            `json:"id"`
				Object   string            `json:"object"`
				Status   string            `json:"status"`
				Metadata map[string]string `json:"metadata"`
			}
			l := lineAt(data, off)
			if err := json.Unmarshal(raw, &r); err != nil || r.Object != "refund" || r.ID == "" {
				return nil, false, fmt.Errorf("%s:%d: data[%d] is not a refund: expected an object with \"object\": \"refund\", its \"id\", \"status\" and \"metadata\"", path, l, i)
			}
			st, ok := refundStatus(r.Status)
			if !ok {
				return nil, false, fmt.Errorf("%s:%d: refund %s has status %q; a refund's status is pending, requires_action, succeeded, failed or canceled", path, l, r.ID, r.Status)
			}
			rec := rawRecord{id: r.ID, status: st, intent: r.Metadata[intentField]}
			if seen[rec] {
				continue // the same refund on two pages, as pages that overlap give it
			}
			seen[rec] = true
			rec.line = l
			recs = append(recs, rec)
		}
	}
	if pages == 0 {
		return nil, false, fmt.Errorf("%s: the file holds no list of refunds; expected the JSON of Stripe's GET /v1/refunds or a serve session", path)
	}
	return recs, hasMore, nil
}

// refundStatus is a Stripe refund status in a history's words:
// requires_action is not terminal, so pending.
func refundStatus(s string) (string, bool) {
	switch s {
	case "pending", "succeeded", "failed", "canceled":
		return s, true
	case "requires_action":
		return "pending", true
	}
	return "", false
}

// lineAt is the line (from 1) of byte off of data, past the spaces
// before a value.
func lineAt(data []byte, off int64) int {
	for off < int64(len(data)) && (data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t' || data[off] == ',' || data[off] == '[') {
		off++
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}
