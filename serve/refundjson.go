package serve

// A refund's JSON body written by hand: the same bytes json.MarshalIndent
// gives refundJSON (two-space indent, HTML-safe escaping, metadata keys
// sorted, a trailing newline), at a fraction of the cost, since every
// create, retrieve and list reply carries refunds. TestRefundBodyIsMarshal
// holds the two together.

import (
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
	field := func(name string) {
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
	b = append(b, ',')
	str("object", r.Object)
	b = append(b, ',')
	field("amount")
	b = strconv.AppendInt(b, r.Amount, 10)
	b = append(b, ',')
	opt("balance_transaction", r.BalanceTransaction)
	b = append(b, ',')
	opt("charge", r.Charge)
	b = append(b, ',')
	field("created")
	b = strconv.AppendInt(b, r.Created, 10)
	b = append(b, ',')
	str("currency", r.Currency)
	b = append(b, ',')
	opt("customer", r.Customer)
	b = append(b, ',')
	opt("customer_account", r.CustomerAccount)
	b = append(b, ',')
	opt("description", r.Description)
	b = append(b, ',')
	null("destination_details")
	b = append(b, ',')
	opt("failure_balance_transaction", r.FailureBalanceTransaction)
	b = append(b, ',')
	opt("failure_reason", r.FailureReason)
	b = append(b, ',')
	opt("instructions_email", r.InstructionsEmail)
	b = append(b, ',')
	field("metadata")
	switch {
	case r.Metadata == nil:
		b = append(b, "null"...)
	case len(r.Metadata) == 0:
		b = append(b, "{}"...)
	default:
		keys := make([]string, 0, len(r.Metadata))
		for k := range r.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
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
	b = append(b, ',')
	null("next_action")
	b = append(b, ',')
	opt("payment_intent", r.PaymentIntent)
	b = append(b, ',')
	opt("payment_method", r.PaymentMethod)
	b = append(b, ',')
	opt("pending_reason", r.PendingReason)
	b = append(b, ',')
	null("presentment_details")
	b = append(b, ',')
	opt("reason", r.Reason)
	b = append(b, ',')
	opt("receipt_number", r.ReceiptNumber)
	b = append(b, ',')
	opt("source_transfer_reversal", r.SourceTransferReversal)
	b = append(b, ',')
	str("status", r.Status)
	b = append(b, ',')
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
