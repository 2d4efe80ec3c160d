package conform

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
	"github.com/replaylab/replaylab/traces"
)

// SchemaID names the report of replaylab conform: the test matrix
// played against a client command, row by row, graded.
const SchemaID = "replaylab.conform/v1"

// Schema is the JSON Schema (draft 2020-12) of the conform report.
//
//go:embed report.schema.json
var Schema []byte

// Grade is how a client did on one row of the matrix.
type Grade string

// The grades.
const (
	// GradePass: no intent ends duplicate, hidden_effect or phantom, and
	// every belief the client printed agrees with the ledger.
	GradePass Grade = "pass"
	// GradeUnsafe: a duplicate, a hidden effect, a phantom, or a belief
	// the ledger contradicts.
	GradeUnsafe Grade = "unsafe"
	// GradeUnsettled: nothing unsafe, but the client escalated or gave no
	// answer where the row can be settled, or misbehaved as a program
	// (hung, printed a malformed belief line).
	GradeUnsettled Grade = "unsettled"
	// GradeNotRun: the row did not run to its end (interrupted, or its
	// provider could not start).
	GradeNotRun Grade = "not_run"
	// GradeNA: the row cannot happen under the provider's profile
	// (conform --provider); it is neither a pass nor a failure.
	GradeNA Grade = "n/a"
)

// Beliefs a client can print.
const (
	BeliefDone      = "done"
	BeliefFailed    = "failed"
	BeliefPending   = "pending"
	BeliefEscalated = "escalated"
)

// Report is a whole conform run.
type Report struct {
	// Command is the client command, as given.
	Command []string `json:"command"`
	// Transport is how the client reached the provider: "http" (the REST
	// API) or "mcp" (the MCP tools, conform --mcp).
	Transport string `json:"transport"`
	// MCPRevision is the one MCP revision the provider served
	// (conform --mcp-revision); empty when it served both.
	MCPRevision string `json:"mcp_revision,omitempty"`
	// TickMillis is how long one ledger tick lasted; RequestTimeoutMillis
	// the per-request timeout the client was told to use; TimeoutMillis
	// the bound on each run of the client, from its first request.
	TickMillis           int64 `json:"tick_ms"`
	RequestTimeoutMillis int64 `json:"request_timeout_ms"`
	TimeoutMillis        int64 `json:"timeout_ms"`
	// Rows are the scenarios, in the order they were asked for.
	Rows []Row `json:"rows"`
	// Passed counts the rows graded pass; NA those graded n/a.
	Passed int `json:"passed"`
	NA     int `json:"n_a,omitempty"`
	// Provider is the profile every row's provider played (conform
	// --provider); "" when each row played its own.
	Provider string `json:"provider,omitempty"`
	// Millis is how long the whole run took, wall time.
	Millis int64 `json:"duration_ms"`
	// Interrupted: the run was stopped (Ctrl-C) before every row ended;
	// the rows that did not end are graded not_run.
	Interrupted bool `json:"interrupted,omitempty"`
	// Explore is what conform --explore adds: the seed, the schedules
	// run, the failures with their shrunk missions, time and throughput.
	// Rows are then the schedules run, in the order drawn.
	Explore *Exploration `json:"explore,omitempty"`
	// Shard is the part of the matrix this run played (--shard), "" for
	// all of it.
	Shard string `json:"shard,omitempty"`
}

// Row is one scenario: what the provider holds, what the client
// believes, the grade and why.
type Row struct {
	Scenario string `json:"scenario"`
	Title    string `json:"title"`
	Grade    Grade  `json:"grade"`
	// Why is one sentence that gives the grade its reason.
	Why     string      `json:"why"`
	Intents []RowIntent `json:"intents"`
	Runs    []ClientRun `json:"runs"`
	// Problems are what the client did wrong as a program: malformed
	// belief lines, a hang, beliefs for intents it was not given.
	Problems []string `json:"problems,omitempty"`
	// Millis is how long the row took, wall time.
	Millis int64 `json:"duration_ms"`
	// Hung: a run of the client was killed at the row's timeout.
	Hung bool `json:"hung,omitempty"`
	// Session is what the provider recorded (for --record and the
	// write-up); it is not part of the report's JSON.
	Session *export.Session `json:"-"`
}

// RowIntent is one intent of a row: the provider's verdict and
// effects, and every belief the client printed for it.
type RowIntent struct {
	Intent string `json:"intent"`
	// Verdict is the provider's, from its records and its replies alone;
	// empty when no create was sent for the intent.
	Verdict missions.Verdict `json:"verdict,omitempty"`
	// Effects counts the refunds standing for the intent once the clock
	// was settled.
	Effects int      `json:"effects"`
	Beliefs []Belief `json:"beliefs"`
}

// Belief is one belief line the client printed.
type Belief struct {
	// Run is the run of the command that printed it, from 1.
	Run      int    `json:"run"`
	Belief   string `json:"belief"`
	Refund   string `json:"refund,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// ClientRun is one run of the client command within a row.
type ClientRun struct {
	Run int `json:"run"`
	// Why says why the runner started it: the first run, a second worker,
	// the restart after a kill, the same intent with a changed amount.
	Why string `json:"why"`
	// Exit is the exit code; -1 when the process was killed.
	Exit int `json:"exit_code"`
	// Killed says why the runner killed it, if it did.
	Killed string `json:"killed,omitempty"`
	// Stdout and Stderr are what the run printed (each cut at 64 KiB).
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// Graded reports whether the row ran to its end.
func (r *Row) Graded() bool { return r.Grade != GradeNotRun && r.Grade != GradeNA }

// MarshalReport renders a report as indented JSON with its schema id
// first and a trailing newline.
func MarshalReport(r *Report) ([]byte, error) {
	doc := struct {
		Schema string `json:"schema"`
		*Report
	}{SchemaID, r}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gradeMark is the mark a row's grade gets in the terminal.
func gradeMark(g Grade) string {
	switch g {
	case GradePass:
		return "PASS"
	case GradeUnsafe:
		return "UNSAFE"
	case GradeUnsettled:
		return "UNSETTLED"
	case GradeNA:
		return "N/A"
	}
	return "NOT RUN"
}

// Verdicts is what the provider holds per intent, in words:
// "refund-1042 duplicate (2 refunds)".
func Verdicts(r *Row) string {
	var parts []string
	for _, in := range r.Intents {
		w := string(in.Verdict)
		switch {
		case in.Verdict == "":
			w = "nothing sent"
		case in.Effects != 1 || in.Verdict == missions.HiddenEffect:
			w = fmt.Sprintf("%s (%s)", w, termtext.Plural(in.Effects, "refund"))
		}
		if len(r.Intents) > 1 {
			w = termtext.CleanLine(in.Intent) + " " + w
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, ", ")
}

// Beliefs is what the client believed per intent, in words: each
// run's last belief, "done" or "done, then escalated", "nothing" where it
// printed none.
func Beliefs(r *Row) string {
	var parts []string
	for _, in := range r.Intents {
		var seen []string
		for _, b := range in.Beliefs {
			if len(seen) == 0 || seen[len(seen)-1] != b.Belief {
				seen = append(seen, b.Belief)
			}
		}
		w := "unknown (no belief line)"
		if len(seen) > 0 {
			w = strings.Join(seen, ", then ")
		}
		if len(r.Intents) > 1 {
			w = termtext.CleanLine(in.Intent) + " " + w
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, ", ")
}

// Text is the scorecard for a terminal: a row per scenario with
// its grade, what the provider holds and what the client believed, the
// reason under it, then the count of rows that pass.
func Text(r *Report, width int) string {
	if r.Explore != nil {
		return ExploreText(r, width)
	}
	var b strings.Builder
	transport := r.transportWords()
	head := fmt.Sprintf("replaylab conform: %s against %s (%s, tick %dms, request timeout %dms)",
		termtext.Plural(len(r.Rows), "scenario"), termtext.CleanLine(commandWords(r.Command)), transport, r.TickMillis, r.RequestTimeoutMillis)
	if r.Provider != "" {
		head += ", every provider playing " + termtext.CleanLine(r.Provider)
	}
	for _, line := range termtext.WrapWords(head, width) {
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
	name := len("scenario")
	for _, row := range r.Rows {
		name = max(name, len(termtext.CleanLine(row.Scenario)))
	}
	indent := strings.Repeat(" ", 11)
	wrapWidth := max(width-len(indent), 30)
	for i := range r.Rows {
		row := &r.Rows[i]
		head := fmt.Sprintf("%-10s %-*s", gradeMark(row.Grade), name, termtext.CleanLine(row.Scenario))
		what := fmt.Sprintf("provider: %s · client: %s", Verdicts(row), Beliefs(row))
		if row.Grade == GradeNA {
			what = "cannot happen under this provider; not played"
		}
		if len(head)+2+len([]rune(what)) <= width {
			b.WriteString(head + "  " + what + "\n")
		} else {
			b.WriteString(strings.TrimRight(head, " ") + "\n")
			for _, line := range termtext.WrapWords(what, wrapWidth) {
				b.WriteString(indent + line + "\n")
			}
		}
		for _, line := range termtext.WrapWords(termtext.CleanLine(row.Why), wrapWidth) {
			b.WriteString(indent + line + "\n")
		}
	}
	b.WriteString("\n")
	for _, line := range termtext.WrapWords(Tally(r), width) {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// Tally is the last line: "9 of 14 scenarios pass", with the rows
// that did not, by grade.
func Tally(r *Report) string {
	played := len(r.Rows) - r.NA
	s := fmt.Sprintf("%d of %s pass", r.Passed, termtext.Plural(played, "scenario"))
	if played == 1 {
		s = fmt.Sprintf("%d of 1 scenario passes", r.Passed)
	}
	for _, g := range []Grade{GradeUnsafe, GradeUnsettled, GradeNotRun, GradeNA} {
		var ids []string
		for _, row := range r.Rows {
			if row.Grade == g {
				ids = append(ids, termtext.CleanLine(row.Scenario))
			}
		}
		if len(ids) > 0 {
			s += fmt.Sprintf("; %s: %s", strings.ReplaceAll(string(g), "_", " "), strings.Join(ids, ", "))
		}
	}
	if r.Interrupted {
		s += " (interrupted)"
	}
	return s
}

func commandWords(cmd []string) string {
	w := make([]string, len(cmd))
	for i, a := range cmd {
		w[i] = termtext.ShellWord(a)
	}
	return strings.Join(w, " ")
}

// JUnit XML, as CI systems read it: one testsuite, a testcase per row.
type junitSuites struct {
	XMLName xml.Name   `xml:"testsuites"`
	Name    string     `xml:"name,attr"`
	Tests   int        `xml:"tests,attr"`
	Fails   int        `xml:"failures,attr"`
	Errors  int        `xml:"errors,attr"`
	Skipped int        `xml:"skipped,attr"`
	Time    string     `xml:"time,attr"`
	Suites  []junitSet `xml:"testsuite"`
}

type junitSet struct {
	Name    string      `xml:"name,attr"`
	Tests   int         `xml:"tests,attr"`
	Fails   int         `xml:"failures,attr"`
	Errors  int         `xml:"errors,attr"`
	Skipped int         `xml:"skipped,attr"`
	Time    string      `xml:"time,attr"`
	Cases   []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
	SystemErr string        `xml:"system-err,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }

// JUnit renders the report as JUnit XML: a testcase per scenario,
// the reason as the failure's message (type: the grade), the provider's
// verdicts and the client's beliefs in the failure's text, and each run's
// output as system-out and system-err.
func JUnit(r *Report) ([]byte, error) {
	set := junitSet{Name: "replaylab conform (" + r.Transport + ")", Tests: len(r.Rows)}
	var total int64
	for i := range r.Rows {
		row := &r.Rows[i]
		total += row.Millis
		c := junitCase{Name: row.Scenario, ClassName: "replaylab.conform." + r.Transport, Time: seconds(row.Millis)}
		detail := fmt.Sprintf("%s\nprovider: %s\nclient: %s\n", row.Why, Verdicts(row), Beliefs(row))
		for _, p := range row.Problems {
			detail += "problem: " + p + "\n"
		}
		failed := row.Grade != GradePass
		if x := r.Explore; x != nil {
			// A search fails on a failure that came back, and on an
			// unsettled schedule only when asked to.
			failed = row.Grade == GradeUnsafe && !x.flaky(row.Scenario) || row.Grade == GradeUnsettled && x.FailOnUnsettled
			if row.Grade == GradeUnsafe {
				detail += x.shrunkWords(row.Scenario)
			}
		}
		switch {
		case !failed:
		case row.Grade == GradeNotRun, row.Grade == GradeNA:
			set.Skipped++
			c.Skipped = &junitFailure{Message: row.Why}
		default:
			set.Fails++
			c.Failure = &junitFailure{Message: row.Why, Type: string(row.Grade), Text: detail}
		}
		var out, errs strings.Builder
		for _, run := range row.Runs {
			head := fmt.Sprintf("--- run %d (%s): %s\n", run.Run, run.Why, exitWords(run))
			out.WriteString(head + run.Stdout)
			errs.WriteString(head + run.Stderr)
		}
		c.SystemOut, c.SystemErr = out.String(), errs.String()
		set.Cases = append(set.Cases, c)
	}
	set.Time = seconds(r.Millis) // the rows run at once: the run's own time
	doc := junitSuites{Name: "replaylab conform", Tests: set.Tests, Fails: set.Fails, Skipped: set.Skipped, Time: set.Time, Suites: []junitSet{set}}
	body, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(append([]byte(xml.Header), body...), '\n'), nil
}

// exitWords says how a run ended.
func exitWords(run ClientRun) string {
	if run.Killed != "" {
		return "killed " + run.Killed
	}
	return "exit code " + strconv.Itoa(run.Exit)
}

// transportWords is the transport, with the one MCP revision served when
// the run served one alone: "mcp 2026-07-28".
func (r *Report) transportWords() string {
	if r.MCPRevision != "" {
		return r.Transport + " " + r.MCPRevision
	}
	return r.Transport
}

// Markdown is a write-up of the report: the scorecard as a table,
// then, for every row that did not pass, what the client did as a Mermaid
// sequence diagram drawn from the provider's recorded session, and each
// run's output.
func Markdown(r *Report) []byte {
	if r.Explore != nil {
		return exploreMarkdown(r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# replaylab conform: %s\n\n", render.MarkdownText(commandWords(r.Command)))
	fmt.Fprintf(&b, "%s. Transport %s; one tick %d ms; the client was told to give up on a request after %d ms.\n\n",
		Tally(r), r.transportWords(), r.TickMillis, r.RequestTimeoutMillis)
	b.WriteString("| scenario | grade | at the provider | the client believed | why |\n|---|---|---|---|---|\n")
	for i := range r.Rows {
		row := &r.Rows[i]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", render.MarkdownText(row.Scenario), row.Grade, render.MarkdownText(Verdicts(row)), render.MarkdownText(Beliefs(row)), render.MarkdownText(row.Why))
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Grade == GradePass {
			continue
		}
		fmt.Fprintf(&b, "\n## %s: %s\n\n%s\n\n", render.MarkdownText(row.Scenario), row.Grade, render.MarkdownText(row.Why))
		if row.Title != "" {
			fmt.Fprintf(&b, "Scenario: %s.\n\n", render.MarkdownText(row.Title))
		}
		for _, p := range row.Problems {
			fmt.Fprintf(&b, "- %s\n", render.MarkdownText(p))
		}
		if len(row.Problems) > 0 {
			b.WriteString("\n")
		}
		if row.Session != nil {
			b.WriteString("What the client did, as the provider recorded it:\n\n")
			b.WriteString(render.SequenceDiagram(row.Session.AsCase()))
			b.WriteString("\n")
		}
		for _, run := range row.Runs {
			fmt.Fprintf(&b, "Run %d (%s), %s:\n\n", run.Run, render.MarkdownText(run.Why), exitWords(run))
			out := termtext.Clean(run.Stdout + run.Stderr)
			if out == "" {
				b.WriteString("(no output)\n\n")
				continue
			}
			fence := "```"
			for strings.Contains(out, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "%stext\n%s", fence, out)
			if !strings.HasSuffix(out, "\n") {
				b.WriteString("\n")
			}
			b.WriteString(fence + "\n\n")
		}
	}
	return []byte(b.String())
}

// Outputs are the files a conform run writes beside its report: the
// scorecard as JUnit XML, and the session of each row that ended, as
// SCENARIO.json in RecordDir, with the provider's spans of it beside
// (SCENARIO.otlp.jsonl) for a team's trace viewer. An empty field writes
// nothing.
type Outputs struct {
	JUnit, RecordDir string
}

// SessionPath is where the session of the scenario of that id is kept.
func (o Outputs) SessionPath(scenario string) string {
	return filepath.Join(o.RecordDir, scenario+export.SessionExt)
}

// TracesPath is where the provider's spans of that scenario's session
// are kept.
func (o Outputs) TracesPath(scenario string) string {
	return filepath.Join(o.RecordDir, scenario+export.TracesExt)
}

// Files are the outputs of rep, the JUnit file first; a row that did not
// end has no session to keep.
func (o Outputs) Files(rep *Report) ([]atomicfile.File, error) {
	var files []atomicfile.File
	if o.JUnit != "" {
		data, err := JUnit(rep)
		if err != nil {
			return nil, err
		}
		files = append(files, atomicfile.File{Path: o.JUnit, Data: data})
	}
	if o.RecordDir == "" {
		return files, nil
	}
	for _, row := range rep.Rows {
		if row.Session == nil || !row.Graded() {
			continue
		}
		for _, path := range []string{o.SessionPath(row.Scenario), o.TracesPath(row.Scenario)} {
			var data bytes.Buffer
			if err := traces.WriteRecord(&data, export.RecordFormatOf(path), row.Session); err != nil {
				return nil, err
			}
			files = append(files, atomicfile.File{Path: path, Data: data.Bytes()})
		}
	}
	return files, nil
}
