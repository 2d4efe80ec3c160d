package schemawalk

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// schemaIssue is the first place in a case file where it does not fit
// the case schema.
type schemaIssue struct {
	offset int64
	where  string // the value's name as the file spells it
	msg    string // what is wrong there, starting with where
}

// patternWords says in words what the schema's patterns accept.
var patternWords = map[string]string{
	`^[a-z0-9][a-z0-9-]{0,63}$`: "lowercase letters, digits and dashes, starting with a letter or digit, at most 64",
	`^re_[0-9]{4,}$`:            "re_ followed by digits, e.g. re_0001",
	`^(ik|ph)_[0-9a-f]+$`:       "ik_ or ph_ followed by hexadecimal digits, e.g. ik_496bcda83e",
	`^[0-9a-f]{16}$`:            "16 hexadecimal digits",
}

func jsonTypeWords(t string) string {
	switch t {
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return t
}

func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, ", ")
}

// shortJSON renders a value as JSON, cut short when long.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "…"
	}
	return string(b)
}

// keyProblem is an object key the case format does not take, and where
// it is: one the format does not have (or has only in other letter case:
// the JSON decoder would take "Seed" for "seed"), or one an object holds
// twice (the decoder would keep the last and say nothing).
type keyProblem struct {
	key      string
	where    string   // e.g. "settings", "events[3]"
	accepted []string // the keys accepted there; none for a key twice
	twice    bool
	offset   int64 // where the key starts in the file
}

func (k keyProblem) message(noun string) string {
	if k.twice {
		return fmt.Sprintf("field %q appears twice in %s (a %s holds each field once)", k.key, k.where, noun)
	}
	return fmt.Sprintf("unknown field %q in %s (accepted: %s)", k.key, k.where, strings.Join(k.accepted, ", "))
}
