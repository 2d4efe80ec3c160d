package export

import "strings"

// RecordFormat is the form a session is written in, chosen by the name of
// the file it goes to: the one rule for serve's --record and conform's.
type RecordFormat int

const (
	// RecordSession is the session itself (SessionSchemaID), as JSON.
	RecordSession RecordFormat = iota
	// RecordHistory is the session's history, as JSON Lines.
	RecordHistory
	// RecordTraces is the provider's spans of the session, as OTLP/JSON
	// lines.
	RecordTraces
)

// The file names' endings that choose each format.
const (
	SessionExt = ".json"
	HistoryExt = ".jsonl"
	TracesExt  = ".otlp.jsonl"
)

// RecordFormatOf is the format a session written to path takes: spans
// for *.otlp.jsonl, a history for *.jsonl, else the session.
func RecordFormatOf(path string) RecordFormat {
	p := strings.ToLower(path)
	switch {
	case strings.HasSuffix(p, TracesExt):
		return RecordTraces
	case strings.HasSuffix(p, HistoryExt):
		return RecordHistory
	}
	return RecordSession
}
