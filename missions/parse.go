package missions

// The mission file format: YAML read strictly into a Mission, every
// mistake named with its line and what would be accepted.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/replaylab/replaylab/internal/fileerr"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
)

// Limits keep a mission file to a size a person could have written.
const (
	MaxFileBytes = 1 << 20
	MaxSteps     = 20000
	MaxTicks     = 10000
	// MaxIntents and MaxWorkers bound the intents of a mission and the
	// workers of one together step.
	MaxIntents = 1000
	MaxWorkers = 8
	// MaxClock bounds the ticks a schedule spans: a wait moves the clock
	// its ticks, every other step one. The provider looks at every object
	// and key on every tick, so a long clock over many attempts would run
	// for minutes.
	MaxClock = 20000
)

// FileError is one problem in a mission file, at a line: the one shape
// of a mistake in a file people write (a profile's too).
type FileError = fileerr.Error

// badControl finds the first character YAML does not allow in a file: a
// C0 control other than tab, line feed and carriage return, DEL, or a C1
// control other than next line. It gives its line and column (from 1).
func badControl(data []byte) (line, col int, r rune, bad bool) {
	line, col = 1, 0
	for _, r := range string(data) {
		col++
		switch {
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r' || r == 0x85:
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			return line, col, r, true
		}
	}
	return 0, 0, 0, false
}

// ValidID says whether s is an id: ^[a-z0-9][a-z0-9-]{0,63}$.
func ValidID(s string) bool { return fileerr.ValidID(s) }

// Parse reads a mission file. name is used in error messages. Every problem
// found is reported, each as a *FileError, joined.
func Parse(name string, data []byte) (*Mission, error) {
	p := &parser{file: name}
	if len(data) > MaxFileBytes {
		return nil, &FileError{File: name, Msg: fmt.Sprintf("file is %d bytes; a mission file may be at most %d", len(data), MaxFileBytes)}
	}
	if !utf8.Valid(data) {
		line, col := badUTF8(data)
		return nil, &FileError{File: name, Line: line, Msg: fmt.Sprintf("column %d: the file is not UTF-8 text (save it as UTF-8)", col)}
	}
	if line, col, r, bad := badControl(data); bad {
		return nil, &FileError{File: name, Line: line, Msg: fmt.Sprintf("column %d: a control character (%U) is not allowed in a YAML file (remove it, or write it as an escape inside double quotes, such as \"\\e\")", col, r)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if err == nil {
		var more yaml.Node
		if err2 := dec.Decode(&more); !errors.Is(err2, io.EOF) {
			line := more.Line
			if len(more.Content) > 0 {
				line = more.Content[0].Line
			}
			if err2 != nil {
				line = yamlErrLine(err2)
			}
			return nil, &FileError{File: name, Line: line, Msg: "a second YAML document starts here (after ---); a mission file holds one mission: put each mission in its own file"}
		}
	}
	if err != nil {
		line := yamlErrLine(err)
		if line > 0 && parserProblem(yamlErrMsg(err)) {
			// The library numbers the lines of its parser's problems
			// (not its scanner's) from 0.
			line++
		}
		// A problem at the end of the file is placed on the line after
		// the last one: name the last line.
		lines := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		line = min(line, lines)
		msg := "not valid YAML: " + yamlErrMsg(err)
		// The library can name the line before the one with the tab.
		for _, l := range []int{line, line + 1} {
			if line > 0 && tabIndented(data, l) {
				line = l
				msg += " (the line is indented with a tab; YAML indents with spaces only)"
				break
			}
		}
		return nil, &FileError{File: name, Line: line, Msg: msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &FileError{File: name, Msg: "the file is empty (a mission needs id, title, goal, intents, schedule and expect)"}
	}
	if errs := aliases(name, &doc); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	m := p.mission(doc.Content[0])
	m.Source = name
	// Defaults are written out, so a case states everything it ran under.
	if m.Contract == "" {
		m.Contract = ledger.V1
	}
	if m.Retention == 0 {
		m.Retention = ledger.DefaultRetention
	}
	if m.KeySource == "" {
		m.KeySource = KeyPerIntent
	}
	p.validate(m)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return m, nil
}

// badUTF8 finds the line and column of the first byte that is not UTF-8.
func badUTF8(data []byte) (line, col int) {
	line, col = 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size == 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		data = data[size:]
	}
	return line, col
}

// tabIndented reports whether line n (from 1) of data starts with white
// space that holds a tab.
func tabIndented(data []byte, n int) bool {
	if n < 1 {
		return false
	}
	lines := strings.SplitN(string(data), "\n", n+1)
	if len(lines) < n {
		return false
	}
	text := lines[n-1]
	indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
	return strings.Contains(indent, "\t")
}

// parserProblem reports whether a YAML error message is one of the YAML
// parser's own (the scanner's are numbered from 1, these from 0).
func parserProblem(msg string) bool {
	for _, p := range []string{"did not find expected ", "found duplicate %", "found incompatible YAML document", "found undefined tag handle"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func yamlErrLine(err error) int {
	var te *yaml.TypeError
	s := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		s = te.Errors[0]
	}
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return n
		}
	}
	return 0
}

func yamlErrMsg(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(s, "line "); i >= 0 {
		if j := strings.Index(s[i:], ": "); j >= 0 {
			return s[i+j+2:]
		}
	}
	return s
}

// aliases reports the aliases in the document, one per line and the
// first few lines only. The parser reads values where they are written,
// so an alias would be read as a value of the wrong kind ("goal must be
// text" for goal: *title); it is reported as what it is instead. The walk
// does not follow aliases, so it is as long as the file, however the
// anchors nest.
func aliases(file string, doc *yaml.Node) []error {
	const most = 10
	var errs []error
	lines, last := 0, -1
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode {
			if n.Line == last {
				return
			}
			last = n.Line
			lines++
			if lines <= most {
				errs = append(errs, &FileError{File: file, Line: n.Line, Msg: fmt.Sprintf(
					"the alias *%s: mission files do not expand anchors, aliases or << merges; write the value out in full", n.Value)})
			}
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	if lines > most {
		errs = append(errs, &FileError{File: file, Msg: fmt.Sprintf("aliases on %d more lines", lines-most)})
	}
	return errs
}

// validate adds what Mission.Validate finds to what the parser found: the
// parser says what is malformed, the one validator what cannot run. A
// problem about a field the parser already faulted (a fixture it could
// not read, then "has no fixture") is the parser's own told again, and is
// left out; every other is reported, at its line, or at the line of the
// mission's key it is about. Problems come in the order of their lines.
func (p *parser) validate(m *Mission) {
	for _, pr := range m.Problems() {
		at := pr.Line
		if at == 0 {
			at = p.missionLine
		}
		told := false
		for _, f := range pr.Fields {
			told = told || p.faulted[fieldAt{at, f}]
		}
		if told {
			continue
		}
		line := pr.Line
		if line == 0 && len(pr.Fields) > 0 {
			line = p.top[pr.Fields[0]]
		}
		p.errs = append(p.errs, &FileError{File: p.file, Line: line, Msg: pr.Msg})
	}
	sort.SliceStable(p.errs, func(i, j int) bool { return lineOf(p.errs[i]) < lineOf(p.errs[j]) })
}

func lineOf(err error) int { return fileerr.LineOf(err) }

type parser struct {
	file string
	errs []error
	// faulted holds the fields the parser found a problem in: a field of
	// the step or intent at a line, or (at line 0) a key of the mission.
	faulted map[fieldAt]bool
	// top is the line of each key of the mission, and missionLine the
	// mission's own: its keys' faults are marked at it.
	top         map[string]int
	missionLine int
	// refused holds the values already refused for their type: what is
	// wrong with them is said once, not again as an empty or unknown
	// value.
	refused map[*yaml.Node]bool
}

// fieldAt is one field of the part of a mission at a line.
type fieldAt struct {
	line  int
	field string
}

// fault marks field faulted when problems were found since start.
func (p *parser) fault(start, line int, field string) {
	if len(p.errs) > start {
		p.mark(line, field)
	}
}

// mark records that the parser reported a problem with field at line.
func (p *parser) mark(line int, field string) {
	if p.faulted == nil {
		p.faulted = map[fieldAt]bool{}
	}
	p.faulted[fieldAt{line, field}] = true
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &FileError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// fields walks a mapping node, rejecting unknown and repeated keys.
func (p *parser) fields(n *yaml.Node, what string, accepted []string, fn func(key string, k, v *yaml.Node)) bool {
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping with keys %s", what, strings.Join(accepted, ", "))
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(accepted, k.Value) {
			p.errf(k, "unknown key %q in %s (accepted: %s)", k.Value, what, strings.Join(accepted, ", "))
			continue
		}
		if seen[k.Value] {
			p.errf(k, "key %q appears twice in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		start := len(p.errs)
		fn(k.Value, k, v)
		// What went wrong in a key's value is about that field.
		p.fault(start, n.Line, k.Value)
	}
	return true
}

// plain reports whether a scalar is written as a value, not as nothing
// (null, ~, or left empty) and without a tag (!!binary, !!str, !custom),
// and says what is wrong when it is not: the YAML library hands such a
// node over as the text "null", "~" or the undecoded bytes.
func (p *parser) plain(n *yaml.Node, what, want string) bool {
	switch {
	case n.Tag == "!!null":
		p.errf(n, "%s is empty (%s); write %s", what, nullWords(n.Value), want)
		return false
	case n.Style&yaml.TaggedStyle != 0:
		p.errf(n, "%s carries the YAML tag %s; write %s, without a tag", what, n.Tag, want)
		return false
	}
	return true
}

func nullWords(v string) string {
	if v == "" {
		return "nothing after the colon"
	}
	return strconv.Quote(v) + " is YAML's null"
}

// yamlTypes names what YAML reads a plain scalar as, by its resolved tag.
var yamlTypes = map[string]string{"!!bool": "a boolean", "!!int": "a number", "!!float": "a number", "!!timestamp": "a date"}

// str reads text. A scalar YAML reads as another type (true, 12, 4.5, a
// date) is refused, not taken as its spelling: `id: true` is a boolean,
// and text that looks like one is written in quotes.
func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, "%s must be text", what)
		p.refuse(n)
		return ""
	}
	if !p.plain(n, what, "text") {
		p.refuse(n)
		return ""
	}
	if t, other := yamlTypes[n.ShortTag()]; other {
		p.errf(n, "%s is %s, which YAML reads as %s, not text; write it in quotes, %q, if text is meant", what, n.Value, t, n.Value)
		p.refuse(n)
		return ""
	}
	return n.Value
}

// word reads one of a fixed set of words (accepted, for the message). A
// scalar YAML reads as another type is refused with the words accepted,
// not with advice to quote it: "true" in quotes is no status either.
func (p *parser) word(n *yaml.Node, what, accepted string) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" && n.Style&yaml.TaggedStyle == 0 {
		if t, other := yamlTypes[n.ShortTag()]; other {
			p.errf(n, "%s is %s, which YAML reads as %s; give one of the words accepted: %s", what, n.Value, t, accepted)
			p.refuse(n)
			return ""
		}
	}
	return p.str(n, what)
}

// fixtureWords and keySourceWords list the words accepted, for messages.
func fixtureWords() string {
	w := make([]string, len(Fixtures))
	for i, f := range Fixtures {
		w[i] = string(f)
	}
	return strings.Join(w, ", ")
}

func keySourceWords() string {
	w := make([]string, len(KeySources))
	for i, k := range KeySources {
		w[i] = string(k)
	}
	return strings.Join(w, ", ")
}

// refuse notes that value n was refused for its type, and said so.
func (p *parser) refuse(n *yaml.Node) {
	if p.refused == nil {
		p.refused = map[*yaml.Node]bool{}
	}
	p.refused[n] = true
}

// boolean reads true or false, unquoted.
func (p *parser) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || !p.plain(n, what, "true or false") {
		return false, false
	}
	if n.ShortTag() != "!!bool" {
		if n.ShortTag() == "!!str" && (n.Value == "true" || n.Value == "false") {
			p.errf(n, "%s is %q, text in quotes; write %s without quotes", what, n.Value, n.Value)
		} else {
			p.errf(n, "%s is %q; it must be true or false", what, n.Value)
		}
		return false, false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	return b, err == nil
}

func (p *parser) integer(n *yaml.Node, what string, lo, hi int) int {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, "%s must be a whole number from %d to %d", what, lo, hi)
		return 0
	}
	if !p.plain(n, what, fmt.Sprintf("a whole number from %d to %d", lo, hi)) {
		return 0
	}
	if n.ShortTag() == "!!str" && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		p.errf(n, "%s is %q, text in quotes; write the number without quotes, %s: %s", what, n.Value, what, n.Value)
		return 0
	}
	if digits := strings.TrimLeft(n.Value, "+-"); len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0123456789") == "" {
		// YAML 1.1 readers take 010 for octal 8, YAML 1.2 ones for 10:
		// the file would mean two things.
		p.errf(n, "%s is %q, a number with a leading zero, which YAML readers take for 8 or for 10; write it without the zero, %s: %s", what, n.Value, what, strings.TrimLeft(digits, "0"))
		return 0
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < lo || v > hi {
		p.errf(n, "%s is %q; it must be a whole number from %d to %d", what, n.Value, lo, hi)
		return 0
	}
	return v
}

func (p *parser) payload(n *yaml.Node, what string) map[string]string {
	out := map[string]string{}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping of field: value", what)
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			p.errf(k, "%s has a field without a name; write name: value, e.g. amount: \"45.00\"", what)
			continue
		}
		if !p.plain(k, what+" field name", "a name") {
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.errf(k, "field %q appears twice in %s", k.Value, what)
		}
		if v.Kind != yaml.ScalarNode {
			p.errf(v, "%s field %q must be a single value", what, k.Value)
			continue
		}
		errs := len(p.errs)
		val := p.str(v, fmt.Sprintf("%s field %q", what, k.Value))
		if len(p.errs) > errs {
			continue
		}
		out[k.Value] = val
	}
	return out
}

func (p *parser) mission(n *yaml.Node) *Mission {
	m := &Mission{}
	var intentsNode, scheduleNode, expectNode *yaml.Node
	seen := map[string]bool{}
	idRefused := false
	p.missionLine, p.top = n.Line, map[string]int{}
	ok := p.fields(n, "the mission", []string{"id", "title", "goal", "provider", "contract", "retention", "key_source", "captured", "intents", "schedule", "reads", "expect"}, func(key string, k, v *yaml.Node) {
		seen[key] = true
		p.top[key] = v.Line
		switch key {
		case "id":
			m.ID = p.str(v, "id")
			idRefused = p.refused[v]
			if m.ID != "" && !ValidID(m.ID) {
				p.errf(v, "id %q: use lowercase letters, digits and dashes, starting with a letter or digit, at most 64 characters", m.ID)
			}
		case "title":
			m.Title = strings.TrimSpace(p.str(v, "title"))
		case "goal":
			m.Goal = strings.TrimSpace(p.str(v, "goal"))
		case "contract", "provider":
			if seen["contract"] && seen["provider"] {
				p.errf(k, "provider and contract both name the provider; keep provider")
				return
			}
			p.top["contract"] = v.Line
			c, err := parseProviderWord(key, p.word(v, key, providerWords(key)))
			if err != nil && !p.refused[v] {
				p.errf(v, "%v", err)
				p.mark(n.Line, "contract")
			}
			m.Contract = c
		case "captured":
			m.Captured = p.captured(v)
		case "retention":
			m.Retention = p.integer(v, "retention", 1, MaxTicks)
		case "key_source":
			ks, err := ParseKeySource(p.word(v, "key_source", keySourceWords()))
			if err != nil && !p.refused[v] {
				p.errf(v, "%v", err)
			}
			m.KeySource = ks
		case "intents":
			intentsNode = v
		case "schedule":
			scheduleNode = v
		case "reads":
			m.Reads = p.reads(v)
		case "expect":
			expectNode = v
		}
	})
	if !ok {
		return m
	}
	for _, req := range []string{"id", "title", "goal", "intents", "schedule", "expect"} {
		if !seen[req] {
			p.errf(n, "the mission has no %q (required keys: id, title, goal, intents, schedule, expect)", req)
			p.mark(n.Line, req)
		}
	}
	if m.ID == "" && seen["id"] && !idRefused {
		p.errf(n, "id is empty")
		p.mark(n.Line, "id")
	}
	if intentsNode != nil {
		m.Intents = p.intents(intentsNode)
	}
	ids := map[string]bool{}
	for _, in := range m.Intents {
		ids[in.ID] = true
	}
	if scheduleNode != nil {
		m.Schedule = p.schedule(scheduleNode, ids, m.Intents)
	}
	if expectNode != nil {
		m.Expect = p.expectations(expectNode, ids)
	}
	return m
}

// reads is the mission's list of read faults, each {fault, lag}.
func (p *parser) reads(n *yaml.Node) []ReadStep {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "reads must be a list of at least one read fault, e.g. - fault: read_lagging with lag: 5 (accepted faults: %s)", termtext.JoinWords(ReadFaults))
		p.mark(p.missionLine, "reads")
		return nil
	}
	if len(n.Content) > MaxSteps {
		p.errf(n, "reads has %d entries; at most %d are allowed", len(n.Content), MaxSteps)
		p.mark(p.missionLine, "reads")
		return nil
	}
	var out []ReadStep
	for _, item := range n.Content {
		// The fields as written; what they must be together is the
		// validator's (ReadStep.Check).
		r := ReadStep{Line: item.Line}
		p.fields(item, "a read fault", []string{"fault", "lag"}, func(key string, k, v *yaml.Node) {
			switch key {
			case "fault":
				f, err := ParseReadFault(p.word(v, "fault", termtext.JoinWords(ReadFaults)))
				if err != nil && !p.refused[v] {
					p.errf(v, "%v", err)
					p.mark(item.Line, "read")
				}
				r.Fault = f
			case "lag":
				r.Lag = p.integer(v, "lag", 1, MaxTicks)
				if r.Lag == 0 {
					p.mark(item.Line, "read")
				}
			}
		})
		if item.Kind != yaml.MappingNode {
			p.mark(item.Line, "read")
		}
		out = append(out, r)
	}
	return out
}

func (p *parser) intents(n *yaml.Node) []Intent {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "intents must be a list of at least one intent (each with id, op, principal, payload)")
		p.mark(p.missionLine, "intents")
		return nil
	}
	if len(n.Content) > MaxIntents {
		p.errf(n, "%d intents; a mission may have at most %d", len(n.Content), MaxIntents)
		p.mark(p.missionLine, "intents")
		return nil
	}
	var out []Intent
	for _, item := range n.Content {
		in := Intent{Line: item.Line}
		got := map[string]bool{}
		p.fields(item, "an intent", []string{"id", "op", "principal", "label", "payload"}, func(key string, k, v *yaml.Node) {
			got[key] = true
			switch key {
			case "id":
				in.ID = p.str(v, "intent id")
			case "op":
				in.Op = p.str(v, "op")
			case "principal":
				in.Principal = p.str(v, "principal")
			case "label":
				in.Label = p.str(v, "label")
			case "payload":
				in.Payload = p.payload(v, "payload")
			}
		})
		if item.Kind != yaml.MappingNode {
			continue
		}
		for _, req := range []string{"id", "op", "principal", "payload"} {
			if !got[req] {
				p.errf(item, "the intent has no %q (required: id, op, principal, payload)", req)
				p.mark(item.Line, req)
			}
		}
		out = append(out, in)
	}
	return out
}

var stepKeys = []string{"attempt", "fixture", "delay", "resolve", "payload", "wait", "read", "restart", "together"}

func (p *parser) schedule(n *yaml.Node, ids map[string]bool, intents []Intent) []Step {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "schedule must be a list of at least one step (attempt, wait, read, restart or together)")
		p.mark(p.missionLine, "schedule")
		return nil
	}
	if len(n.Content) > MaxSteps {
		p.errf(n, "schedule has %d steps; at most %d are allowed", len(n.Content), MaxSteps)
		p.mark(p.missionLine, "schedule")
		return nil
	}
	var out []Step
	for _, item := range n.Content {
		out = append(out, p.step(item, ids, intents, false))
	}
	return out
}

func (p *parser) step(n *yaml.Node, ids map[string]bool, intents []Intent, inTogether bool) Step {
	st := Step{Line: n.Line}
	// A step whose kind the parser could not read may be the attempt the
	// schedule seems to lack.
	defer func() {
		for _, f := range []string{"attempt", "together", "step"} {
			if p.faulted[fieldAt{n.Line, f}] {
				p.mark(p.missionLine, "attempts")
				return
			}
		}
	}()
	var kinds []string
	var togetherNode, payloadNode *yaml.Node
	hasDelay, hasResolve := false, false
	p.fields(n, "a step", stepKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "attempt":
			kinds = append(kinds, key)
			st.Attempt = p.str(v, "attempt")
		case "fixture":
			f, err := ParseFixture(p.word(v, "fixture", fixtureWords()))
			if err != nil && !p.refused[v] {
				p.errf(v, "%v", err)
			}
			st.Fixture = f
		case "delay":
			hasDelay = true
			st.Delay = p.integer(v, "delay", 1, MaxTicks)
		case "resolve":
			hasResolve = true
			name := p.word(v, "resolve", "succeeded, failed")
			s, _ := ledger.ParseStatus(name)
			if !s.Terminal() && !p.refused[v] {
				p.errf(v, "resolve %q is not a terminal status (accepted: succeeded, failed)", name)
			}
			st.Resolve = s
		case "payload":
			payloadNode = v
			st.Payload = p.payload(v, "payload")
		case "wait":
			kinds = append(kinds, key)
			st.Wait = p.integer(v, "wait", 1, MaxTicks)
		case "read":
			kinds = append(kinds, key)
			st.Read = p.str(v, "read")
		case "restart":
			kinds = append(kinds, key)
			if b, ok := p.boolean(v, "restart"); ok && !b {
				p.errf(v, "restart must be true")
			}
			st.Restart = true
		case "together":
			kinds = append(kinds, key)
			togetherNode = v
		}
	})
	if n.Kind != yaml.MappingNode {
		return st
	}
	if len(kinds) != 1 {
		what := "none"
		if len(kinds) > 1 {
			what = strings.Join(kinds, " and ")
		}
		p.errf(n, "a step does exactly one thing; this one has %s (accepted: attempt, wait, read, restart, together)", what)
		p.mark(n.Line, "step")
		return st
	}
	if inTogether && kinds[0] != "attempt" {
		p.errf(n, "a together step holds attempts only; found %s", kinds[0])
		p.mark(n.Line, "step")
	}
	if kinds[0] != "attempt" {
		if st.Fixture != "" || hasDelay || hasResolve || payloadNode != nil {
			p.errf(n, "fixture, delay, resolve and payload belong to attempt steps only")
			p.mark(n.Line, "step")
		}
	}
	switch kinds[0] {
	case "together":
		if togetherNode.Kind != yaml.SequenceNode {
			p.errf(togetherNode, "together must be a list of 2 to %d attempts sent at the same tick", MaxWorkers)
			p.mark(n.Line, "together")
			p.mark(n.Line, "step")
			break
		}
		if n := len(togetherNode.Content); n < 2 || n > MaxWorkers {
			p.errf(togetherNode, "together must list from 2 to %d attempts sent at the same tick; this one lists %d", MaxWorkers, n)
			p.mark(st.Line, "together")
			p.mark(st.Line, "step")
			break
		}
		for _, item := range togetherNode.Content {
			st.Together = append(st.Together, p.step(item, ids, intents, true))
		}
	}
	return st
}

func (p *parser) expectations(n *yaml.Node, ids map[string]bool) []Expectation {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "expect must be a list of at least one expected outcome (when, effects, verdicts)")
		return nil
	}
	var out []Expectation
	for _, item := range n.Content {
		e := Expectation{Line: item.Line}
		got := map[string]bool{}
		p.fields(item, "an expectation", []string{"when", "effects", "succeeded", "verdicts"}, func(key string, k, v *yaml.Node) {
			got[key] = true
			switch key {
			case "when":
				e.When = p.overrides(v)
			case "effects":
				e.Effects = p.integer(v, "effects", 0, MaxSteps)
			case "succeeded":
				s := p.integer(v, "succeeded", 0, MaxSteps)
				e.Succeeded = &s
			case "verdicts":
				e.Verdicts = map[string]Verdict{}
				if v.Kind != yaml.MappingNode {
					p.errf(v, "verdicts must map intent ids to verdicts (accepted verdicts: %s)", termtext.JoinWords(Verdicts))
					return
				}
				for i := 0; i+1 < len(v.Content); i += 2 {
					ik, iv := v.Content[i], v.Content[i+1]
					if _, dup := e.Verdicts[ik.Value]; dup {
						p.errf(ik, "intent %q appears twice in verdicts; give each intent one verdict", ik.Value)
						continue
					}
					if !ids[ik.Value] {
						p.errf(ik, "verdict for intent %q, which the mission does not declare (declared: %s)", ik.Value, sortedKeys(ids))
					}
					vd, err := ParseVerdict(p.str(iv, "verdict"))
					if err != nil {
						p.errf(iv, "%v", err)
					}
					e.Verdicts[ik.Value] = vd
				}
			}
		})
		if item.Kind == yaml.MappingNode && !got["effects"] {
			p.errf(item, "the expectation has no \"effects\" (the effect count the ledger must end with)")
		}
		out = append(out, e)
	}
	return out
}

func (p *parser) overrides(n *yaml.Node) Overrides {
	var o Overrides
	p.fields(n, "when", []string{"stable_keys", "policy", "provider", "contract", "key_source"}, func(key string, k, v *yaml.Node) {
		var s string
		errs := len(p.errs)
		if key == "stable_keys" && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" && p.plain(v, key, "on or off") {
			// true and false are booleans in YAML; the switch is on or
			// off, and the message says so.
			s = v.Value
		} else {
			s = p.str(v, key)
		}
		if len(p.errs) > errs {
			return // said already
		}
		switch key {
		case "stable_keys":
			b, err := ParseOnOff(s)
			if err != nil {
				p.errf(v, "stable_keys: %v", err)
			}
			o.StableKeys = &b
		case "policy":
			pol, err := ParsePolicy(s)
			if err != nil {
				p.errf(v, "%v", err)
			}
			o.Policy = &pol
		case "contract", "provider":
			if o.Contract != nil {
				p.errf(k, "provider and contract both name the provider; keep provider")
				return
			}
			c, err := parseProviderWord(key, s)
			if err != nil {
				p.errf(v, "%v", err)
			}
			o.Contract = &c
		case "key_source":
			ks, err := ParseKeySource(s)
			if err != nil {
				p.errf(v, "%v", err)
			}
			o.KeySource = &ks
		}
	})
	return o
}

// captured reads what was captured per charge: charge: "45.00".
func (p *parser) captured(n *yaml.Node) map[string]string {
	out := p.payload(n, "captured")
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if a, ok := out[k.Value]; ok {
			if _, err := ParseAmount(a); err != nil {
				p.errf(v, "captured %s: %v", k.Value, err)
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}
