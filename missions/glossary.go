package missions

// Term is one word the lab and the course show, with what it means.
type Term struct {
	Word    string
	Meaning string
}

// Glossary is every word of the lab's screens that a newcomer may not
// know, in the order a first run meets them. The lab's glossary screen
// shows it; a test holds it to the words the screens use.
var Glossary = []Term{
	{"mission", "A scripted story: the intents a caller means to perform, and a schedule of what the network and the provider do with each attempt."},
	{"intent", "One operation the caller means to perform once, such as one refund of 45.00 on order 1042."},
	{"attempt (#1, #2, …)", "One send of a request for an intent. Attempts are numbered across the whole mission."},
	{"schedule, step", "The mission's script, one step at a time: an attempt and its fixture, a wait, a read-back, a restart of the caller, or sends together."},
	{"fixture", "What the network and the provider do with one attempt: the fault under test. The fixture is the input, not the outcome."},
	{"failure_before_commit", "The provider refuses the request before running it; nothing is saved under the key."},
	{"timeout_after_commit", "The provider commits, but its reply is lost: the caller sees a timeout."},
	{"timeout_before_commit", "The request is lost on the way: the provider never sees it. The caller sees the same timeout as after a commit."},
	{"success", "The request reaches the provider, which runs it and answers."},
	{"server_error_after_commit", "The provider commits, then answers 500. Whether it keeps that 500 under the key is its contract (saves: stripe-v1 keeps it, checkout does not)."},
	{"late_commit +N", "The provider is still running the request when the caller stops waiting; it commits N ticks later."},
	{"pending +N→status", "The provider creates the refund as pending; N ticks later it ends succeeded or failed."},
	{"crash_after_send", "The provider commits and answers, but the caller's process dies before it records the answer."},
	{"tick, t0 t1 …", "The lab's clock: whole ticks, never wall time. A step takes a tick; waits and late commits count in ticks."},
	{"ledger", "The provider's own record: its effects (refund objects) and its idempotency records. The truth the caller cannot see directly."},
	{"effect", "One committed change in the ledger, such as one refund. The counter counts them; a refund that ended failed is not one."},
	{"intended", "How many effects the mission means to make: one per intent."},
	{"not run yet", "The counter's third line before the first step: nothing has been sent, so there is nothing to weigh yet."},
	{"not settled yet", "The counter's third line while the run is under way: a caller may still be waiting, reading back or retrying, so no colour says right or wrong before the end (only more successes than intended, which nothing takes back, are red at once)."},
	{"= as intended", "The counter's third line: the ledger holds as many effects as intended, and every caller's belief agrees with it."},
	{"▲ N extra", "The counter's third line: the ledger holds N effects more than intended, a duplicate."},
	{"▼ N not made", "The counter's third line: N intended effects were not made, and the caller knows it failed (failed_cleanly)."},
	{"▼ N short", "The counter's third line: N intended effects are not in the ledger (not yet, or not at all), and that is not known to stay so: a caller does not yet know its intent failed, or a request still executing at the provider may yet commit; or a caller believes done an effect that is not there (a phantom, drawn red)."},
	{"a verdict on the counter", "The counter's third line when the count is as intended but a verdict is not exactly_once or failed_cleanly: it names that verdict, duplicate, hidden_effect or phantom in red (one intent made twice where another made none, or a caller's belief is not what the ledger holds), escalated in amber (a person decides)."},
	{"idempotency key, key A", "A name the caller sends with a request so the provider can tell a retry from a new request. The lab letters them in the order they are first sent: key A, key B. \"same\" marks a retry under a key sent before, \"new\" a key other than those sent before; the hash is in the row's detail strip."},
	{"idempotency record", "What the provider keeps under a key: the answer it gave (such as 200 re_0001) and until which tick it keeps it (kept to t100)."},
	{"re_0001", "The id of a refund object in the ledger."},
	{"stable keys on/off", "On: the key is minted once, when the intent is recorded, and every attempt reuses it. Off: every attempt mints a fresh key."},
	{"key source, payload_hash", "Where keys come from: one per intent, or a hash of the payload, which gives two intents with the same payload the same key."},
	{"contract v1", "The provider replays the saved answer to a same-key repeat, errors included; a repeat while the first still runs gets a conflict; a key reused with other parameters is refused; keys are kept for a retention window."},
	{"contract v2", "Like v1, but a repeat after a failed or partial execution completes the work and returns the updated answer."},
	{"contract none", "The provider ignores keys: every request it runs is a new effect."},
	{"provider profile", "A provider's idempotency contract as data (replaylab providers lists them): saves (which answers are kept under a key), replay (what a repeat returns), failed_key (reusable, or final), mismatch (a key with other parameters: refused, or ignored), in_flight (a repeat while the first runs: refused, or executed), retention (how long keys live) and refund_limit (refunds past the capture refused). v1, v2 and none are stripe-v1, stripe-v2 and none."},
	{"captured", "What was captured on a charge: refunds that would take more than that are refused before they run (the provider's refund limit)."},
	{"retention", "How many ticks the provider keeps a key. After that the key is pruned and a repeat runs anew."},
	{"policy naive", "The agent loop: anything but success reads as failed and is sent again until the attempts run out."},
	{"policy guarded", "Classifies first, never resends while the outcome is unknown except with the same key in the safe window, reads the ledger to settle it, and hands what it cannot settle to a person."},
	{"provider: committed", "The provider ran the request and made the effect."},
	{"provider: replayed", "The key was known: the provider answered with the saved response and made nothing new."},
	{"provider: rejected", "Refused before running: nothing happened and nothing was saved."},
	{"provider: executing", "The request is still running when the caller stops waiting."},
	{"provider: completed", "Contract v2 finished work a repeat found partial, and answered anew."},
	{"provider: conflict", "The same key is still running: answered with the profile's in-flight refusal (409 under v1), nothing saved for this request."},
	{"provider: mismatch", "The key was saved with other parameters: answered with the profile's refusal (400 under v1), nothing run."},
	{"provider: key_failed", "The key's earlier attempt failed and the provider made the key final: refused, nothing run; a new key is needed."},
	{"provider: key_required", "The provider requires a key and the request carried none: refused, nothing run."},
	{"provider: over_limit", "The refund would take more than was captured on the charge: refused before it ran (the provider's balance check)."},
	{"provider: not_reached", "The request was lost before the provider saw it."},
	{"provider: pruned", "The provider forgot a key whose retention ran out."},
	{"provider: resolved", "A pending refund reached its end: succeeded or failed."},
	{"provider: late_commit", "A request the provider was still running when the caller stopped waiting has now committed."},
	{"(provider)", "A timeline row of the provider's own doing, with no request of the caller's: a late commit, a pending refund resolved, a key pruned."},
	{"eff, ↑ ↓", "The timeline's effects column: the ledger's count after the row; ↑ where the row made an effect, ↓ where a pending refund ended failed."},
	{"›, ▶, ✓, ▸", "In the schedule: › the step n runs next, ▶ the step just run, ✓ the steps run before it. In the timeline: › the rows of the step just run, ▸ the selected row. In the course's schedule, ▸ is the step that runs next."},
	{"↳", "The strip under the timeline: the selected row in full, its note, the agent's words and the key's hash."},
	{"!!", "Marks a timeline row where the caller handed the intent to a person."},
	{"observed", "What the caller saw: success, error, timeout, conflict, mismatch, pending, or nothing."},
	{"class", "The caller's reading of an attempt: known failure before execution, recorded but not terminal, known terminal, or unknown. Anything not surely one of the first three is unknown."},
	{"checkpoint", "What the caller records about an intent as it goes: approved, submitted, committed, reconciled, delivered, failed, unknown, escalated. h hides or shows these rows."},
	{"held", "The guarded caller chose not to send: no request met the step's fixture."},
	{"read-back", "The caller asks the provider which refunds exist for the intent, and believes what it finds, not what it heard."},
	{"belief", "What the caller believes of an intent now: done, failed, pending, unknown or escalated."},
	{"exactly_once", "Verdict: the caller believes it done, and exactly one effect of its own stands."},
	{"failed_cleanly", "Verdict: the caller believes it failed, and nothing of its own took effect."},
	{"duplicate", "Verdict: more effects than intended stand for one intent."},
	{"hidden_effect", "Verdict: the caller believes it failed or does not know, yet the ledger has its effect."},
	{"phantom", "Verdict: the caller believes it done, but no effect of its own is in the ledger (it was merged into another's)."},
	{"escalated", "Verdict: handed to a person with the evidence, because reading the ledger could not settle it."},
	{"evidence (g)", "What the guarded caller hands a person: every attempt with its key and answer, the reads, and the objects found."},
	{"case", "One mission run under one set of settings, every event and the final ledger: what e exports as JSON."},
	{"pin (m), compare (v)", "Pin keeps a case to set beside others; compare lines the pinned cases up attempt by attempt."},
	{"◆ diverge", "It marks " + DivergeMeaning + "."},
}

// DivergeMeaning is what a ◆ marks, in the one wording the glossary, the
// lab's compare and compare's text and Markdown all use.
const DivergeMeaning = "where two cases first hold different ledgers behind the same words"
