package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"iter"
	"slices"

	"github.com/replaylab/replaylab/internal/termtext"
)

// WriteSession writes a session as MarshalSession renders it, the same
// bytes, without holding the whole text: the requests, the clock's
// changes and the ledger's objects and records are written one at a
// time, so a session of 100,000 requests costs a buffer, not its size.
func WriteSession(w io.Writer, s *Session) error {
	sw := &sessionWriter{w: bufio.NewWriterSize(w, 64<<10), depth: "  "}
	sw.raw("{\n")
	sw.field("schema", SessionSchemaID, false)
	if s.Started != "" {
		sw.field("started", s.Started, false)
	}
	if s.Mission != nil {
		sw.field("mission", s.Mission, false)
	}
	sw.field("settings", s.Settings, false)
	var reqs iter.Seq[SessionRequest]
	if s.Source != nil || s.Requests != nil {
		reqs = s.Each()
	}
	writeSeq(sw, "requests", reqs, "  ", false)
	writeArray(sw, "changes", s.Changes, "  ", false)
	sw.field("tick", s.Tick, false)
	sw.field("settled", s.Settled, false)
	sw.raw("  \"ledger\": {\n")
	sw.depth = "    "
	sw.field("tick", s.Ledger.Tick, false)
	sw.field("effects", s.Ledger.Effects, false)
	writeArray(sw, "objects", s.Ledger.Objects, "    ", false)
	writeArray(sw, "records", s.Ledger.Records, "    ", len(s.Ledger.InFlight) == 0)
	if len(s.Ledger.InFlight) > 0 {
		sw.field("in_flight", s.Ledger.InFlight, true)
	}
	sw.depth = "  "
	sw.raw("  },\n")
	sw.field("outcome", s.Outcome, true)
	sw.raw("}\n")
	if sw.err != nil {
		return sw.err
	}
	return sw.w.Flush()
}

// sessionWriter writes JSON as an Encoder with a two-space indent and no
// HTML escaping writes it, a value at a time, with hidden characters
// escaped (EscapeHidden).
type sessionWriter struct {
	w     *bufio.Writer
	depth string
	buf   bytes.Buffer
	err   error
}

func (sw *sessionWriter) raw(s string) {
	if sw.err == nil {
		_, sw.err = sw.w.WriteString(s)
	}
}

// value writes v as it sits at indent prefix.
func (sw *sessionWriter) value(v any, prefix string) {
	if sw.err != nil {
		return
	}
	sw.buf.Reset()
	enc := json.NewEncoder(&sw.buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if sw.err = enc.Encode(v); sw.err != nil {
		return
	}
	_, sw.err = sw.w.Write(termtext.EscapeHidden(bytes.TrimSuffix(sw.buf.Bytes(), []byte{'\n'})))
}

// field writes "name": v, at the writer's depth, and the comma unless
// last.
func (sw *sessionWriter) field(name string, v any, last bool) {
	sw.raw(sw.depth + `"` + name + `": `)
	sw.value(v, sw.depth)
	sw.end(last)
}

func (sw *sessionWriter) end(last bool) {
	if last {
		sw.raw("\n")
	} else {
		sw.raw(",\n")
	}
}

// writeArray writes "name": [...] at depth, an element at a time; an
// empty slice is [], as json writes it, and a nil one null.
func writeArray[T any](sw *sessionWriter, name string, xs []T, depth string, last bool) {
	var seq iter.Seq[T]
	if xs != nil {
		seq = slices.Values(xs)
	}
	writeSeq(sw, name, seq, depth, last)
}

// writeSeq is writeArray over the elements seq yields; a nil seq is null.
func writeSeq[T any](sw *sessionWriter, name string, seq iter.Seq[T], depth string, last bool) {
	sw.raw(depth + `"` + name + `": `)
	if seq == nil {
		sw.raw("null")
		sw.end(last)
		return
	}
	inner := depth + "  "
	n := 0
	for x := range seq {
		if n == 0 {
			sw.raw("[\n")
		} else {
			sw.raw(",\n")
		}
		sw.raw(inner)
		sw.value(x, inner)
		n++
	}
	if n == 0 {
		sw.raw("[]")
	} else {
		sw.raw("\n" + depth + "]")
	}
	sw.end(last)
}
