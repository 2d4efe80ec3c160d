package conform

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// ExploreText is the scorecard of a search: what ran, each distinct
// failure with its shrunk schedule and the commands that play it again,
// the flaky ones with both outcomes, the unsettled ones by id, then the
// totals, time and throughput.
func ExploreText(r *Report, width int) string {
	x := r.Explore
	var b strings.Builder
	line := func(s string, indent string) {
		for _, l := range termtext.WrapWords(termtext.CleanLine(s), max(width-len(indent), 30)) {
			b.WriteString(indent + l + "\n")
		}
	}
	shard := ""
	if x.Shard != "" {
		shard = ", shard " + x.Shard
	}
	line(fmt.Sprintf("replaylab conform --explore: %s of seed %d%s against %s (%s, tick %dms, request timeout %dms)",
		termtext.Plural(x.Ran, "generated schedule"), x.Seed, shard, commandWords(r.Command), r.Transport, r.TickMillis, r.RequestTimeoutMillis), "")
	b.WriteString("\n")
	for i, f := range x.Failures {
		line(fmt.Sprintf("UNSAFE  %s (found by %s)", f.Mission.ID, strings.Join(f.Found, ", ")), "")
		line("plays: "+f.Plays, "        ")
		line(f.Why, "        ")
		if !f.Minimal {
			line("(not shown minimal: the shrinking stopped before every smaller schedule ran, so a smaller one may fail too)", "        ")
		}
		line("again: "+f.Reproduce, "        ")
		line("lab:   "+f.Lab, "        ")
		if i < len(x.Failures)-1 {
			b.WriteString("\n")
		}
	}
	if len(x.Failures) > 0 {
		if x.Out == "" {
			line("The commands above open the shrunk missions where --out DIR writes them; give --out to keep them.", "")
		}
		b.WriteString("\n")
	}
	for _, f := range x.Flaky {
		line("FLAKY   "+f.Schedule+": failed, then passed when run again", "")
		line("first: "+f.First, "        ")
		line("again: "+f.Again, "        ")
		b.WriteString("\n")
	}
	if len(x.Unsettled) > 0 {
		verdict := "counted, not failed (--fail-on unsettled fails them)"
		if x.FailOnUnsettled {
			verdict = "failed (--fail-on unsettled)"
		}
		line(fmt.Sprintf("UNSETTLED %d, %s: %s", len(x.Unsettled), verdict, strings.Join(x.Unsettled, ", ")), "")
		b.WriteString("\n")
	}
	s := fmt.Sprintf("%d of %s pass; %s unsafe (%s after shrinking), %d flaky, %d unsettled",
		x.Passed, termtext.Plural(x.Ran, "schedule"), strconv.Itoa(x.Ran-x.Passed-len(x.Unsettled)), termtext.Plural(len(x.Failures), "distinct failure"), len(x.Flaky), len(x.Unsettled))
	if x.Stopped != "" {
		s += "; stopped: " + x.Stopped
	}
	line(s+".", "")
	line(fmt.Sprintf("Searched in %s (%.1f schedules a second); shrinking took %s and %s of the client.",
		seconds(x.SearchMillis)+"s", x.PerSecond, seconds(x.ShrinkMillis)+"s", termtext.Plural(x.ShrinkRuns, "run")), "")
	return b.String()
}

// MissionFiles are the shrunk missions of a search, as the files --out
// holds: DIR/ID.yaml, each a mission file validate, conform --missions
// and the lab open.
func MissionFiles(r *Report, dir string) ([]atomicfile.File, error) {
	if r.Explore == nil {
		return nil, nil
	}
	var files []atomicfile.File
	for _, f := range r.Explore.Failures {
		data, err := missions.Format(f.Mission)
		if err != nil {
			return nil, fmt.Errorf("mission %s: %w", f.Mission.ID, err)
		}
		files = append(files, atomicfile.File{Path: filepath.Join(dir, f.Mission.ID+".yaml"), Data: data})
	}
	return files, nil
}

// exploreMarkdown is a search as a write-up: the totals, then each
// distinct failure with what it plays, why it failed, the commands that
// play it again and its mission file; the flaky and unsettled schedules.
func exploreMarkdown(r *Report) []byte {
	x := r.Explore
	var b strings.Builder
	fmt.Fprintf(&b, "# replaylab conform --explore: %s\n\n", render.MarkdownText(commandWords(r.Command)))
	fmt.Fprintf(&b, "%s of seed %d: %d pass, %s, %d flaky, %d unsettled. Transport %s; one tick %d ms; the client was told to give up on a request after %d ms; %.1f schedules a second.\n",
		termtext.Plural(x.Ran, "generated schedule"), x.Seed, x.Passed, termtext.Plural(len(x.Failures), "distinct failure"), len(x.Flaky), len(x.Unsettled),
		r.Transport, r.TickMillis, r.RequestTimeoutMillis, x.PerSecond)
	for _, f := range x.Failures {
		fmt.Fprintf(&b, "\n## %s: unsafe\n\n%s\n\nIt plays: %s.\n\nFound by %s. Play it again, and open it in the lab:\n\n",
			render.MarkdownText(f.Mission.ID), render.MarkdownText(f.Why), render.MarkdownText(f.Plays), render.MarkdownText(strings.Join(f.Found, ", ")))
		fmt.Fprintf(&b, "```sh\n%s\n%s\n```\n\n", f.Reproduce, f.Lab)
		if data, err := missions.Format(f.Mission); err == nil {
			fmt.Fprintf(&b, "```yaml\n%s```\n", data)
		}
	}
	if len(x.Flaky) > 0 {
		b.WriteString("\n## Flaky\n\n")
		for _, f := range x.Flaky {
			fmt.Fprintf(&b, "- %s: first %s; again %s\n", render.MarkdownText(f.Schedule), render.MarkdownText(f.First), render.MarkdownText(f.Again))
		}
	}
	if len(x.Unsettled) > 0 {
		fmt.Fprintf(&b, "\n## Unsettled\n\n%s\n", render.MarkdownText(strings.Join(x.Unsettled, ", ")))
	}
	return []byte(b.String())
}
