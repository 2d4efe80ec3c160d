package serve

import (
	"github.com/replaylab/replaylab/ledger"
)

// listIndex holds, for the refunds of a ledger, what a list filters them
// by: each one's charge and payment intent as its payload gave them, and
// the refunds of each intent, charge and payment intent in the order they
// were made. A list then reads the refunds of its filter alone, newest
// first, and stops at the end of its page. It follows the ledger (sync):
// refunds are only ever added, and what a list filters by never changes
// (an update keeps the intent field, and charges are not updated).
type listIndex struct {
	n                                   int
	charge, paymentIntent               []string
	byIntent, byCharge, byPaymentIntent map[string][]ledger.ObjectID
	all                                 []ledger.ObjectID
}

// sync indexes the refunds led made since the last sync.
func (x *listIndex) sync(led *ledger.Ledger) {
	if x.byIntent == nil {
		x.byIntent, x.byCharge, x.byPaymentIntent = map[string][]ledger.ObjectID{}, map[string][]ledger.ObjectID{}, map[string][]ledger.ObjectID{}
	}
	for ; x.n < led.Objects(); x.n++ {
		id := ledger.ObjectID(x.n + 1)
		o, _ := led.Object(id)
		charge, pi := payloadValue(o.Payload, "charge"), payloadValue(o.Payload, "payment_intent")
		x.charge = append(x.charge, charge)
		x.paymentIntent = append(x.paymentIntent, pi)
		x.all = append(x.all, id)
		x.byIntent[o.Intent] = append(x.byIntent[o.Intent], id)
		if charge != "" {
			x.byCharge[charge] = append(x.byCharge[charge], id)
		}
		if pi != "" {
			x.byPaymentIntent[pi] = append(x.byPaymentIntent[pi], id)
		}
	}
}

// candidates are the refunds that may match lq, oldest first: those of
// the narrowest filter it names, else all.
func (x *listIndex) candidates(lq listQuery) []ledger.ObjectID {
	best := x.all
	pick := func(ids []ledger.ObjectID, named bool) {
		if named && len(ids) < len(best) {
			best = ids
		}
	}
	pick(x.byIntent[lq.intent], lq.intent != "")
	pick(x.byCharge[lq.charge], lq.charge != "")
	pick(x.byPaymentIntent[lq.paymentIntent], lq.paymentIntent != "")
	if (lq.intent != "" && len(x.byIntent[lq.intent]) == 0) || (lq.charge != "" && len(x.byCharge[lq.charge]) == 0) ||
		(lq.paymentIntent != "" && len(x.byPaymentIntent[lq.paymentIntent]) == 0) {
		return nil
	}
	return best
}

// matches reports whether refund id (o, as the read sees it) passes every
// filter of lq.
func (x *listIndex) matches(id ledger.ObjectID, o ledger.Object, lq listQuery) bool {
	i := int(id) - 1
	return (lq.charge == "" || x.charge[i] == lq.charge) &&
		(lq.paymentIntent == "" || x.paymentIntent[i] == lq.paymentIntent) &&
		(lq.intent == "" || o.Intent == lq.intent)
}
