package cli

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// TestMain runs the tests from the repository's root, where a user runs
// replaylab: they read README.md, docs/, testdata/ and the catalog by the
// paths the documentation gives.
func TestMain(m *testing.M) {
	if err := os.Chdir("../.."); err != nil {
		panic(err)
	}
	code := m.Run()
	if examplesDir != "" {
		os.RemoveAll(examplesDir)
	}
	os.Exit(code)
}

// executeIO runs the command line with the given output streams and no
// input.
func executeIO(args []string, stdout, stderr io.Writer) int {
	return executeContext(context.Background(), args, stdout, stderr)
}

// executeContext is executeIO under ctx.
func executeContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, strings.NewReader(""), stdout, stderr)
}

// execute runs the command line on the process's own streams.
func execute(args []string) int { return Main(args, os.Stdin, os.Stdout, os.Stderr) }
