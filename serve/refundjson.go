package serve

// A refund's JSON body written by hand: the same bytes json.MarshalIndent
// gives refundJSON (two-space indent, HTML-safe escaping, metadata keys
// sorted, a trailing newline), at a fraction of the cost, since every
// create, retrieve and list reply carries refunds. TestRefundBodyIsMarshal
// holds the two together.

import (
	"maps"
	"slices"
	"strconv"

	"github.com/replaylab/replaylab/internal/jsontext"
)

// refundBody is marshal(r).
func refundBody(r refundJSON) []byte {
	return append(appendRefund(make([]byte, 0, 1024), r, ""), '\n')
}

// appendRefund appends r as json.MarshalIndent writes it, each line after
// the first prefixed by indent (a refund inside a list is indented).
func appendRefund(b []byte, r refundJSON, indent string) []byte {
	in := indent + "  "
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '\n')
		b = append(b, in...)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `": `...)
	}
	str := func(name, v string) {
		field(name)
		b = jsontext.AppendString(b, v)
	}
	opt := func(name string, v *string) {
		field(name)
		if v == nil {
			b = append(b, "null"...)
			return
		}
		b = jsontext.AppendString(b, *v)
	}
	null := func(name string) {
		field(name)
		b = append(b, "null"...)
	}
	b = append(b, '{')
	str("id", r.ID)
	str("object", r.Object)
	field("amount")
	b = strconv.AppendInt(b, r.Amount, 10)
	opt("balance_transaction", r.BalanceTransaction)
	opt("charge", r.Charge)
	field("created")
	b = strconv.AppendInt(b, r.Created, 10)
	str("currency", r.Currency)
	opt("customer", r.Customer)
	opt("customer_account", r.CustomerAccount)
	opt("description", r.Description)
	null("destination_details")
	opt("failure_balance_transaction", r.FailureBalanceTransaction)
	opt("failure_reason", r.FailureReason)
	opt("instructions_email", r.InstructionsEmail)
	field("metadata")
	switch {
	case r.Metadata == nil:
		b = append(b, "null"...)
	case len(r.Metadata) == 0:
		b = append(b, "{}"...)
	default:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(r.Metadata)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			b = append(b, in...)
			b = append(b, "  "...)
			b = jsontext.AppendString(b, k)
			b = append(b, ": "...)
			b = jsontext.AppendString(b, r.Metadata[k])
		}
		b = append(b, '\n')
		b = append(b, in...)
		b = append(b, '}')
	}
	null("next_action")
	opt("payment_intent", r.PaymentIntent)
	opt("payment_method", r.PaymentMethod)
	opt("pending_reason", r.PendingReason)
	null("presentment_details")
	opt("reason", r.Reason)
	opt("receipt_number", r.ReceiptNumber)
	opt("source_transfer_reversal", r.SourceTransferReversal)
	str("status", r.Status)
	opt("transfer_reversal", r.TransferReversal)
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, '}')
}

// listBody is marshal(l): a list of refunds.
func listBody(l listJSON) []byte {
	b := make([]byte, 0, 128+1024*len(l.Data))
	b = append(b, "{\n  \"object\": "...)
	b = jsontext.AppendString(b, l.Object)
	b = append(b, ",\n  \"data\": ["...)
	for i, r := range l.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = appendRefund(b, r, "    ")
	}
	if len(l.Data) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "],\n  \"has_more\": "...)
	b = strconv.AppendBool(b, l.HasMore)
	b = append(b, ",\n  \"url\": "...)
	b = jsontext.AppendString(b, l.URL)
	return append(b, "\n}\n"...)
}
