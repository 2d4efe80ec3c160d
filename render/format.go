package render

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// Format is how a command writes a case or a comparison.
type Format string

// The formats.
const (
	Text     Format = "text"     // the human summary, or a comparison's table
	JSON     Format = "json"     // the case export, or a comparison for scripts
	Markdown Format = "markdown" // a write-up of a case, or a comparison as GFM
)

// ParseFormat reads a format as written; a near miss ("md", "JSON") is
// named in the error.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, JSON, Markdown:
		return f, nil
	}
	meant := map[string]string{"md": "markdown", "txt": "text"}[strings.ToLower(s)]
	if meant == "" {
		for _, w := range []Format{Text, Markdown, JSON} {
			if strings.EqualFold(s, string(w)) {
				meant = string(w)
			}
		}
	}
	if meant != "" {
		return "", fmt.Errorf("unknown format %q; did you mean %s? (accepted: text, markdown, json)", s, meant)
	}
	return "", fmt.Errorf("unknown format %q (accepted: text, markdown, json)", s)
}

// Case renders a case in the format; text fits width columns.
func Case(c *missions.Case, f Format, width int) ([]byte, error) {
	switch f {
	case JSON:
		return export.Marshal(c)
	case Text:
		var buf bytes.Buffer
		WriteSummary(&buf, c, width)
		return buf.Bytes(), nil
	case Markdown:
		return WriteUp(c)
	}
	return nil, fmt.Errorf("unknown format %q (accepted: text, markdown, json)", f)
}
