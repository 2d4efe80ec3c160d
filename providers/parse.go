// Package providers holds provider profiles: the idempotency contract of
// a provider as data, in YAML, read and validated with the line of every
// mistake, and the built-in profiles, embedded, each written from its
// provider's own pages.
package providers

// The profile file format: YAML read strictly into a ledger.Profile.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/replaylab/replaylab/internal/fileerr"
	"github.com/replaylab/replaylab/ledger"
)

// MaxFileBytes bounds a profile file: a page of text.
const MaxFileBytes = 64 << 10

// FileError is one problem in a profile file, at a line.
type FileError = fileerr.Error

// The keys of a profile and of its parts, in the order of the format.
var (
	profileKeys = []string{"id", "title", "summary", "docs", "assumed", "key", "retention", "saves", "replay", "failed_key", "mismatch", "in_flight", "refund_limit"}
	keyKeys     = []string{"header", "body", "max_length", "required", "missing"}
	refusalKeys = []string{"status", "code", "message", "retry_after"}
	assumedKeys = []string{"field", "why"}
)

// Parse reads a profile file; name is used in messages. Every problem
// found is reported, each a *FileError with its line, joined.
func Parse(name string, data []byte) (*ledger.Profile, error) {
	if len(data) > MaxFileBytes {
		return nil, &FileError{File: name, Msg: fmt.Sprintf("file is %d bytes; a profile file may be at most %d", len(data), MaxFileBytes)}
	}
	if !utf8.Valid(data) {
		return nil, &FileError{File: name, Msg: "the file is not UTF-8 text (save it as UTF-8)"}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, &FileError{File: name, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, &FileError{File: name, Line: more.Line, Msg: "a second YAML document starts here (after ---); a profile file holds one profile"}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &FileError{File: name, Msg: "the file is empty (a profile needs " + strings.Join(required, ", ") + ")"}
	}
	p := &parser{file: name}
	p.aliases(&doc)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	prof := p.profile(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	// What the grammar lets through, the one validator judges, each
	// problem at the line of its field.
	for _, pr := range prof.Problems() {
		p.errs = append(p.errs, &FileError{File: name, Line: p.lineOf(pr.Field), Msg: pr.Error()})
	}
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b error) int { return lineOf(a) - lineOf(b) })
		return nil, errors.Join(p.errs...)
	}
	return prof, nil
}

// required are the keys every profile has; retention only where keys are
// kept.
var required = []string{"id", "title", "summary", "docs", "key", "saves", "replay", "failed_key", "mismatch", "in_flight", "refund_limit"}

func lineOf(err error) int { return fileerr.LineOf(err) }

type parser struct {
	file  string
	errs  []error
	lines map[string]int
	top   int
}

// lineOf is the line of a field named as Problems names it
// ("key.max_length", "assumed[2].why"), or of the nearest part of it.
func (p *parser) lineOf(field string) int {
	for f := field; f != ""; {
		if l, ok := p.lines[f]; ok {
			return l
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return p.top
}

// aliases refuses anchors' aliases and << merges: a profile is read where
// it is written, so each value is written out in full.
func (p *parser) aliases(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		p.errf(n, "the alias *%s: profile files do not expand anchors, aliases or << merges; write the value out in full", n.Value)
		return
	}
	for _, c := range n.Content {
		p.aliases(c)
	}
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, &FileError{File: p.file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

// fields walks a mapping, refusing unknown and repeated keys and noting
// each key's line under path.
func (p *parser) fields(n *yaml.Node, path, what string, accepted []string, fn func(key string, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping with keys %s", what, strings.Join(accepted, ", "))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(accepted, k.Value):
			p.errf(k, "unknown key %q in %s (accepted: %s)", k.Value, what, strings.Join(accepted, ", "))
			continue
		case seen[k.Value]:
			p.errf(k, "key %q appears twice in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		p.lines[path+k.Value] = k.Line
		fn(k.Value, v)
	}
}

// scalar is a plain value: not a mapping or list, not null, not tagged.
func (p *parser) scalar(n *yaml.Node, what, want string) bool {
	switch {
	case n.Kind != yaml.ScalarNode:
		p.errf(n, "%s must be %s", what, want)
	case n.Tag == "!!null":
		p.errf(n, "%s is empty; write %s", what, want)
	case n.Style&yaml.TaggedStyle != 0:
		p.errf(n, "%s carries the YAML tag %s; write %s without a tag", what, n.Tag, want)
	case n.Kind == yaml.AliasNode:
		p.errf(n, "%s is an alias; write the value out in full", what)
	default:
		return true
	}
	return false
}

func (p *parser) str(n *yaml.Node, what string) string {
	if !p.scalar(n, what, "text") {
		return ""
	}
	if t := n.ShortTag(); t != "!!str" {
		p.errf(n, "%s is %s, which YAML reads as %s, not text; write it in quotes if text is meant", what, n.Value, strings.TrimPrefix(t, "!!"))
		return ""
	}
	if strings.ContainsFunc(n.Value, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f }) {
		p.errf(n, "%s holds a control character; profiles hold plain text", what)
		return ""
	}
	return n.Value
}

func (p *parser) integer(n *yaml.Node, what string, lo, hi int) int {
	want := fmt.Sprintf("a whole number from %d to %d", lo, hi)
	if !p.scalar(n, what, want) {
		return 0
	}
	v, err := strconv.Atoi(n.Value)
	if n.ShortTag() != "!!int" || err != nil || v < lo || v > hi {
		p.errf(n, "%s is %q; it must be %s", what, n.Value, want)
		return 0
	}
	return v
}

func (p *parser) boolean(n *yaml.Node, what string) bool {
	if !p.scalar(n, what, "true or false") {
		return false
	}
	if n.ShortTag() != "!!bool" || (n.Value != "true" && n.Value != "false") {
		p.errf(n, "%s is %q; it must be true or false", what, n.Value)
		return false
	}
	return n.Value == "true"
}

func (p *parser) profile(n *yaml.Node) *ledger.Profile {
	prof := &ledger.Profile{}
	p.lines, p.top = map[string]int{}, n.Line
	seen := map[string]bool{}
	p.fields(n, "", "the profile", profileKeys, func(key string, v *yaml.Node) {
		seen[key] = true
		switch key {
		case "id":
			prof.ID = p.str(v, "id")
			if prof.ID != "" && !ValidID(prof.ID) {
				p.errf(v, "id %q: use lower-case letters, digits and dashes, starting with a letter or digit, at most 64 characters", prof.ID)
			}
		case "title":
			prof.Title = p.line(v, "title")
		case "summary":
			prof.Summary = p.line(v, "summary")
		case "docs":
			p.list(v, "docs", func(i int, item *yaml.Node) {
				if d := p.str(item, "a page in docs"); d != "" {
					prof.Docs = append(prof.Docs, d)
				}
			})
		case "assumed":
			p.list(v, "assumed", func(i int, item *yaml.Node) {
				var a ledger.Assumption
				path := fmt.Sprintf("assumed[%d].", i)
				p.lines[path[:len(path)-1]] = item.Line
				p.fields(item, path, "an entry of assumed", assumedKeys, func(key string, v *yaml.Node) {
					switch key {
					case "field":
						a.Field = p.str(v, "field")
					case "why":
						a.Why = p.str(v, "why")
					}
				})
				prof.Assumed = append(prof.Assumed, a)
			})
		case "key":
			p.fields(v, "key.", "key", keyKeys, func(key string, v *yaml.Node) {
				switch key {
				case "header":
					prof.Key.Header = p.str(v, "key.header")
				case "body":
					prof.Key.Body = p.str(v, "key.body")
				case "max_length":
					prof.Key.MaxLength = p.integer(v, "key.max_length", 1, ledger.MaxKeyLength)
				case "required":
					prof.Key.Required = p.boolean(v, "key.required")
				case "missing":
					prof.Key.Missing = p.refusal(v, "key.missing", false)
				}
			})
		case "retention":
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int" {
				p.errf(v, "retention %s has no unit: write a whole number and a unit, s, m, h or d, such as %sh or %sd", v.Value, v.Value, v.Value)
				return
			}
			if s := p.str(v, "retention"); s != "" {
				r, err := ledger.ParseSpan(s)
				if err != nil {
					p.errf(v, "%v", err)
				}
				prof.Retention = r
			}
		case "saves":
			prof.Saves = ledger.Saves(p.word(v, "saves", ledger.SavesValues))
		case "replay":
			prof.Replay = ledger.Replay(p.word(v, "replay", ledger.ReplayValues))
		case "failed_key":
			if v.Kind == yaml.ScalarNode {
				p.word(v, "failed_key", []string{"reusable"})
				return
			}
			p.fields(v, "failed_key.", "failed_key (reusable, or final: a refusal)", []string{"final"}, func(_ string, v *yaml.Node) {
				prof.FailedKey = p.refusal(v, "failed_key.final", false)
			})
			if prof.FailedKey == nil && v.Kind == yaml.MappingNode && len(p.errs) == 0 {
				p.errf(v, "failed_key: write reusable, or final: with the refusal")
			}
		case "mismatch":
			prof.Mismatch = p.refusalOr(v, "mismatch", "ignored", false)
		case "in_flight":
			prof.InFlight = p.refusalOr(v, "in_flight", "executes", true)
		case "refund_limit":
			if r := p.refusal(v, "refund_limit", false); r != nil {
				prof.RefundLimit = *r
			}
		}
	})
	if n.Kind == yaml.MappingNode {
		var missing []string
		for _, k := range required {
			if !seen[k] {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			p.errf(n, "missing %s (a profile needs %s)", strings.Join(missing, ", "), strings.Join(required, ", "))
		}
	}
	return prof
}

// line reads text of one line.
func (p *parser) line(n *yaml.Node, what string) string {
	s := p.str(n, what)
	if strings.Contains(strings.TrimRight(s, "\n"), "\n") {
		p.errf(n, "%s must be one line", what)
	}
	return strings.TrimRight(s, "\n")
}

func (p *parser) list(n *yaml.Node, what string, fn func(i int, item *yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "%s must be a list (one \"- \" item per line)", what)
		return
	}
	for i, item := range n.Content {
		fn(i, item)
	}
}

func (p *parser) word(n *yaml.Node, what string, accepted any) string {
	var words []string
	switch a := accepted.(type) {
	case []ledger.Saves:
		for _, w := range a {
			words = append(words, string(w))
		}
	case []ledger.Replay:
		for _, w := range a {
			words = append(words, string(w))
		}
	case []string:
		words = a
	}
	want := "one of " + strings.Join(words, ", ")
	if !p.scalar(n, what, want) {
		return ""
	}
	if !slices.Contains(words, n.Value) {
		p.errf(n, "%s %q is not known (accepted: %s)", what, n.Value, strings.Join(words, ", "))
		return ""
	}
	return n.Value
}

// refusalOr reads either the word that stands for no refusal or a
// refusal.
func (p *parser) refusalOr(n *yaml.Node, what, word string, retry bool) *ledger.Refusal {
	if n.Kind == yaml.ScalarNode {
		p.word(n, what, []string{word})
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be %s, or a refusal: status, code, message", what, word)
		return nil
	}
	return p.refusal(n, what, retry)
}

func (p *parser) refusal(n *yaml.Node, what string, retry bool) *ledger.Refusal {
	r := &ledger.Refusal{}
	keys := refusalKeys
	if !retry {
		keys = refusalKeys[:3]
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a refusal: a mapping with %s", what, strings.Join(keys, ", "))
		return nil
	}
	p.fields(n, what+".", what, keys, func(key string, v *yaml.Node) {
		switch key {
		case "status":
			r.Status = p.integer(v, what+".status", 400, 599)
		case "code":
			r.Code = p.str(v, what+".code")
		case "message":
			r.Message = p.line(v, what+".message")
		case "retry_after":
			r.RetryAfter = p.integer(v, what+".retry_after", 1, 3600)
		}
	})
	return r
}

// ValidID says whether s is a profile id: ^[a-z0-9][a-z0-9-]{0,63}$.
func ValidID(s string) bool { return fileerr.ValidID(s) }
