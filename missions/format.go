package missions

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
)

// Format writes m as a mission file in the catalog's format: what Parse
// reads back as the same mission.
func Format(m *Mission) ([]byte, error) {
	doc := mapping()
	add(doc, "id", str(m.ID))
	add(doc, "title", str(m.Title))
	goal := str(wrapWords(m.Goal, 76))
	goal.Style = yaml.LiteralStyle
	add(doc, "goal", goal)
	if m.Contract != "" && m.Contract != ledger.V1 {
		add(doc, providerKey(m.Contract), str(providerValue(m.Contract)))
	}
	if m.Retention != 0 && m.Retention != ledger.DefaultRetention {
		add(doc, "retention", num(m.Retention))
	}
	if m.KeySource != "" && m.KeySource != KeyPerIntent {
		add(doc, "key_source", str(string(m.KeySource)))
	}
	if len(m.Captured) > 0 {
		add(doc, "captured", payloadNode(m.Captured, false))
	}
	intents := &yaml.Node{Kind: yaml.SequenceNode}
	for _, in := range m.Intents {
		n := mapping()
		add(n, "id", str(in.ID))
		add(n, "op", str(in.Op))
		add(n, "principal", str(in.Principal))
		if in.Label != "" {
			add(n, "label", str(in.Label))
		}
		add(n, "payload", payloadNode(in.Payload, false))
		intents.Content = append(intents.Content, n)
	}
	add(doc, "intents", intents)
	schedule := &yaml.Node{Kind: yaml.SequenceNode}
	for _, st := range m.Schedule {
		n := stepNode(st)
		if len(m.Schedule) > longSchedule {
			// A long schedule reads, and fits, one step a line.
			n.Style = yaml.FlowStyle
		}
		schedule.Content = append(schedule.Content, n)
	}
	add(doc, "schedule", schedule)
	if len(m.Reads) > 0 {
		reads := &yaml.Node{Kind: yaml.SequenceNode}
		for _, r := range m.Reads {
			n := mapping()
			n.Style = yaml.FlowStyle
			add(n, "fault", str(string(r.Fault)))
			if r.Lag > 0 {
				add(n, "lag", num(r.Lag))
			}
			reads.Content = append(reads.Content, n)
		}
		add(doc, "reads", reads)
	}
	expect := &yaml.Node{Kind: yaml.SequenceNode}
	for _, e := range m.Expect {
		n := mapping()
		when := mapping()
		when.Style = yaml.FlowStyle
		o := e.When
		if o.StableKeys != nil {
			add(when, "stable_keys", str(OnOff(*o.StableKeys)))
		}
		if o.Policy != nil {
			add(when, "policy", str(string(*o.Policy)))
		}
		if o.Contract != nil {
			add(when, providerKey(*o.Contract), str(providerValue(*o.Contract)))
		}
		if o.KeySource != nil {
			add(when, "key_source", str(string(*o.KeySource)))
		}
		add(n, "when", when)
		add(n, "effects", num(e.Effects))
		if e.Succeeded != nil {
			add(n, "succeeded", num(*e.Succeeded))
		}
		if len(e.Verdicts) > 0 {
			vs := mapping()
			vs.Style = yaml.FlowStyle
			for _, in := range m.Intents {
				if v, ok := e.Verdicts[in.ID]; ok {
					add(vs, in.ID, str(string(v)))
				}
			}
			add(n, "verdicts", vs)
		}
		expect.Content = append(expect.Content, n)
	}
	add(doc, "expect", expect)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// longSchedule is the most steps Format writes one field a line.
const longSchedule = 50

func stepNode(st Step) *yaml.Node {
	n := mapping()
	switch st.Kind() {
	case StepAttempt:
		add(n, "attempt", str(st.Attempt))
		add(n, "fixture", str(string(st.Fixture)))
		if st.Delay > 0 {
			add(n, "delay", num(st.Delay))
		}
		if st.Resolve != 0 {
			add(n, "resolve", str(st.Resolve.String()))
		}
		if len(st.Payload) > 0 {
			add(n, "payload", payloadNode(st.Payload, true))
		}
	case StepWait:
		add(n, "wait", num(st.Wait))
	case StepRead:
		add(n, "read", str(st.Read))
	case StepRestart:
		add(n, "restart", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	case StepTogether:
		parts := &yaml.Node{Kind: yaml.SequenceNode}
		for _, t := range st.Together {
			parts.Content = append(parts.Content, stepNode(t))
		}
		add(n, "together", parts)
	}
	return n
}

func payloadNode(p map[string]string, flow bool) *yaml.Node {
	n := mapping()
	if flow {
		n.Style = yaml.FlowStyle
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := str(p[k])
		v.Style = yaml.DoubleQuotedStyle
		add(n, k, v)
	}
	return n
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func num(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

// wrapWords breaks text into lines of at most width bytes, between words;
// the line breaks a text has are kept.
func wrapWords(text string, width int) string {
	var out []string
	for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		lines := termtext.WrapWords(para, width)
		if len(lines) == 0 {
			lines = []string{""}
		}
		out = append(out, lines...)
	}
	return strings.Join(out, "\n") + "\n"
}

// providerKey and providerValue write a provider as a mission file names
// it: contract: for the three short names, as before; provider: and the
// profile's id for every other.
func providerKey(c ledger.Contract) string {
	if providers.Short(c) {
		return "contract"
	}
	return "provider"
}

func providerValue(c ledger.Contract) string {
	if providers.Short(c) {
		return string(c)
	}
	return ProfileTitle(c)
}
