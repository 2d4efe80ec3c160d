package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Cold start of `replaylab --help` beside a hello-world Go binary, both
// built here and started afresh each time, in one run:
//
//	go test -run=^$ -bench=ColdStart ./internal/cli
//
// Issue 12's goal: at most 2.5× the hello-world. The two are started in
// turn in one loop, so that a change in the machine's load falls on both,
// and the benchmark reports each one's time and the ratio. A third binary,
// the hello-world with net/http linked in (which serve needs), shows how
// much of the start is the standard library's. With
// REPLAYLAB_BASELINE_BIN naming another build of replaylab (an earlier
// commit's), its --help is timed in the same loop, as baseline-help-ms.
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name+".go")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		return path
	}
	build := func(out string, args ...string) string {
		bin := filepath.Join(dir, out)
		cmd := exec.Command("go", append([]string{"build", "-o", bin}, args...)...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, msg)
		}
		return bin
	}
	hello := build("hello", write("hello", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"))
	nethttp := build("nethttp", write("nethttp", "package main\n\nimport (\n\t\"fmt\"\n\t_ \"net/http\"\n)\n\nfunc main() { fmt.Println(\"hello\") }\n"))
	lab := build("replaylab", ".")
	runs := []struct {
		metric string
		argv   []string
	}{{"hello-ms", []string{hello}}, {"nethttp-ms", []string{nethttp}}, {"help-ms", []string{lab, "--help"}}}
	if base := os.Getenv("REPLAYLAB_BASELINE_BIN"); base != "" {
		runs = append(runs, struct {
			metric string
			argv   []string
		}{"baseline-help-ms", []string{base, "--help"}})
	}
	took := make([]time.Duration, len(runs))
	for b.Loop() {
		for i, r := range runs {
			start := time.Now()
			if err := exec.Command(r.argv[0], r.argv[1:]...).Run(); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(start)
		}
	}
	n := float64(b.N)
	for i, r := range runs {
		b.ReportMetric(float64(took[i].Microseconds())/1000/n, r.metric)
	}
	b.ReportMetric(float64(took[2])/float64(took[0]), "help/hello")
	b.ReportMetric(float64(took[1])/float64(took[0]), "nethttp/hello")
}
