package conform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// UnmarshalReport reads a report MarshalReport wrote (conform --json),
// refusing another document, another version or a field it does not
// know, with the file's name.
func UnmarshalReport(name string, data []byte) (*Report, error) {
	var doc struct {
		Schema string `json:"schema"`
		*Report
	}
	doc.Report = &Report{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("%s: not JSON at byte %d: %v (expected a report written by replaylab conform --json)", name, syn.Offset, err)
		}
		return nil, fmt.Errorf("%s: %v (expected a report written by replaylab conform --json)", name, err)
	}
	if doc.Schema != SchemaID {
		return nil, fmt.Errorf("%s: schema %q is not a conform report (expected %q, as replaylab conform --json writes)", name, doc.Schema, SchemaID)
	}
	if len(doc.Command) == 0 {
		return nil, fmt.Errorf("%s: the report has no command", name)
	}
	return doc.Report, nil
}

// Merge joins the reports of the shards of one run into one: the rows
// of each in turn, the counts added, and, for a search, its failures
// kept once each by their shrunk schedule. The shards must come from one
// command, transport, tick and seed.
func Merge(names []string, reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("no reports to merge")
	}
	first := reps[0]
	out := &Report{Command: first.Command, Transport: first.Transport, TickMillis: first.TickMillis,
		RequestTimeoutMillis: first.RequestTimeoutMillis, TimeoutMillis: first.TimeoutMillis, Rows: []Row{}}
	if first.Explore != nil {
		x := first.Explore
		out.Explore = &Exploration{Seed: x.Seed, Asked: x.Asked, Unsettled: []string{}, Failures: []Failure{}, Flaky: []Flaky{}, FailOnUnsettled: x.FailOnUnsettled}
	}
	var searchMillis int64
	shards := map[string]string{}
	for i, r := range reps {
		switch {
		case !slices.Equal(r.Command, first.Command) || r.Transport != first.Transport || r.TickMillis != first.TickMillis:
			return nil, fmt.Errorf("%s: its command, transport or tick differs from %s's; merge the shards of one run", names[i], names[0])
		case (r.Explore == nil) != (first.Explore == nil):
			return nil, fmt.Errorf("%s and %s: one is a search (--explore) and the other the matrix; merge the shards of one run", names[0], names[i])
		case r.Explore != nil && (r.Explore.Seed != first.Explore.Seed || r.Explore.Asked != first.Explore.Asked):
			return nil, fmt.Errorf("%s: seed %d and %d schedules, where %s has seed %d and %d; merge the shards of one run", names[i], r.Explore.Seed, r.Explore.Asked, names[0], first.Explore.Seed, first.Explore.Asked)
		}
		shard := r.Shard
		if r.Explore != nil {
			shard = r.Explore.Shard
		}
		if other, seen := shards[shard]; seen {
			return nil, fmt.Errorf("%s and %s are both shard %q; give each shard once", other, names[i], shard)
		}
		shards[shard] = names[i]
		out.Rows = append(out.Rows, r.Rows...)
		out.Passed += r.Passed
		out.Millis = max(out.Millis, r.Millis)
		out.Interrupted = out.Interrupted || r.Interrupted
		if x := r.Explore; x != nil {
			o := out.Explore
			o.Ran += x.Ran
			o.Passed += x.Passed
			o.Unsettled = append(o.Unsettled, x.Unsettled...)
			o.Flaky = append(o.Flaky, x.Flaky...)
			o.ShrinkRuns += x.ShrinkRuns
			o.ShrinkMillis += x.ShrinkMillis
			searchMillis += x.SearchMillis
			o.SearchMillis = max(o.SearchMillis, x.SearchMillis)
			if x.Stopped != "" {
				o.Stopped = x.Stopped
			}
		next:
			for _, f := range x.Failures {
				for j := range o.Failures {
					if shapeOf(o.Failures[j].Mission) == shapeOf(f.Mission) {
						o.Failures[j].Found = append(o.Failures[j].Found, f.Found...)
						continue next
					}
				}
				o.Failures = append(o.Failures, f)
			}
		}
	}
	if o := out.Explore; o != nil && searchMillis > 0 {
		// The shards ran side by side: the throughput of them all.
		o.PerSecond = float64(o.Ran) / (float64(o.SearchMillis) / 1000)
	}
	return out, nil
}
