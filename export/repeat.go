package export

import "fmt"

// Repeat says what a create repeats: the create for the same intent just
// before it (Of, its seq), and how the wire tells the two apart, as the
// earlier one stood when this one came. It is
// what names the hop that sent an extra create: the same request sent
// again is a transport's or an SDK's doing; a new call with the same
// arguments after a reply that never came is a retry by whoever decided
// to call again (the model, a retry layer) without knowing whether the
// first had committed.
type Repeat struct {
	Of  int    `json:"of"`
	How string `json:"how"`
	// Key is the key it carried against the earlier one's: same_key,
	// new_key or no_key.
	Key string `json:"key"`
}

// How a create repeats the one before it.
const (
	// RepeatResent: the same request sent again: the same MCP session and
	// JSON-RPC id.
	RepeatResent = "resent"
	// RepeatReissued: a new request with the same arguments, sent while
	// the earlier one had no reply: it was lost (held, closed, gone) or
	// not yet decided.
	RepeatReissued = "reissued"
	// RepeatAfterReply: a new request with the same arguments, after the
	// provider answered the earlier one (its reply decided and sent; with
	// several callers at once, not always to this one).
	RepeatAfterReply = "after_reply"
	// RepeatOtherArguments: a request with other arguments (another
	// amount, charge or metadata) for the same intent.
	RepeatOtherArguments = "other_arguments"
)

// The key a repeat carried against the earlier create's.
const (
	KeySame = "same_key"
	KeyNew  = "new_key"
	KeyNone = "no_key"
)

// RepeatWords lists Repeat.How's words, in the order above.
func RepeatWords() []string {
	return []string{RepeatResent, RepeatReissued, RepeatAfterReply, RepeatOtherArguments}
}

// RepeatOf is how create r repeats prev, the intent's create before it,
// as prev stood when r came: its reply delivered, lost, or not yet sent.
func RepeatOf(prev, r SessionRequest) Repeat {
	rep := Repeat{Of: prev.Seq, Key: KeyNone}
	switch {
	case r.Key != "" && r.Key == prev.Key:
		rep.Key = KeySame
	case r.Key != "":
		rep.Key = KeyNew
	}
	switch {
	case r.Digest != prev.Digest:
		rep.How = RepeatOtherArguments
	case r.Call != nil && prev.Call != nil && r.Call.Session == prev.Call.Session && r.Call.ID == prev.Call.ID &&
		r.Call.Transport == prev.Call.Transport && r.Call.Session != "":
		rep.How = RepeatResent
	case prev.Wire == WireDelivered:
		rep.How = RepeatAfterReply
	default:
		rep.How = RepeatReissued
	}
	return rep
}

// DescribeRepeat says in plain words what create r (whose Repeat is set)
// repeated, and so which hop sent it, as the wire showed it: "a new tool
// call with the same arguments, with no key, while request 1 had no
// reply (held until the client gave up): a retry that could not know
// whether request 1 had committed". prev is the request it repeats, as
// it ended; "" when r repeats nothing.
func DescribeRepeat(r, prev SessionRequest) string {
	if r.Repeat == nil {
		return ""
	}
	key := map[string]string{KeySame: "under the same key", KeyNew: "under a new key", KeyNone: "with no key"}[r.Repeat.Key]
	call := "request"
	if r.Call != nil {
		call = "tool call"
	}
	of := r.Repeat.Of
	switch r.Repeat.How {
	case RepeatResent:
		return fmt.Sprintf("request %d sent again (the same JSON-RPC id %s in the same MCP session): the MCP transport or SDK re-sent it, not the model", of, r.Call.ID)
	case RepeatReissued:
		return fmt.Sprintf("a new %s with the same arguments, %s, while request %d had no reply (%s): a retry that could not know whether request %d had committed", call, key, of, lostWords(prev.Wire), of)
	case RepeatAfterReply:
		return fmt.Sprintf("a new %s with the same arguments, %s, after the provider answered request %d (%s)", call, key, of, replyWords(prev))
	default:
		return fmt.Sprintf("a %s with other arguments than request %d, %s", call, of, key)
	}
}

// lostWords says what became of a reply that never reached the client.
func lostWords(wire string) string {
	switch wire {
	case WireHeld:
		return "held until the client gave up"
	case WireClosed:
		return "its stream closed without one"
	case WireGone:
		return "the client left before it was written"
	default:
		return "still unanswered"
	}
}

// replyWords names a delivered reply: its status, and its error or the
// refund it showed.
func replyWords(r SessionRequest) string {
	switch {
	case r.Error != "":
		return fmt.Sprintf("%d, %s", r.Status, r.Error)
	case len(r.Shown) == 1:
		return fmt.Sprintf("%d, a refund %s", r.Status, r.Shown[0].Status)
	case r.Status != 0:
		return fmt.Sprintf("%d", r.Status)
	default:
		return "a result"
	}
}
