package cli

import (
	"strings"
	"testing"
)

// TestCompletion: the shell completion offers mission ids (with titles)
// where a command takes one, the accepted words of each fixed-word flag,
// and directories for directory flags.
func TestCompletion(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"run", ""}, []string{"timeout-then-success\tTimeout, then success", "saved-server-error\t", ":4"}, nil},
		{[]string{"run", "timeout-then-success", ""}, []string{":4"}, []string{"failure-then-failure"}},
		{[]string{"lab", ""}, []string{"concurrent-duplicates\t"}, nil},
		{[]string{"export", "timeout-then-success", ""}, []string{"failure-then-failure\t"}, nil},
		{[]string{"run", "--stable-keys", ""}, []string{"on\n", "off\n"}, nil},
		{[]string{"run", "--policy", ""}, []string{"naive\n", "guarded\n"}, nil},
		{[]string{"lab", "--contract", ""}, []string{"v1\n", "v2\n", "none\n"}, nil},
		{[]string{"", "--key-source", ""}, []string{"intent\n", "payload_hash\n"}, nil},
		{[]string{"compare", "--format", ""}, []string{"text\n", "markdown\n", "json\n"}, nil},
		{[]string{"run", "--fail-on", ""}, []string{"duplicate\n", "hidden_effect\n", "phantom\n"}, nil},
		{[]string{"export", "--dir", ""}, []string{":16"}, nil},
		{[]string{"missions", "--missions", ""}, []string{":16"}, nil},
	}
	for _, tt := range tests {
		args := tt.args
		if args[0] == "" {
			args = args[1:] // the bare command: the lab
		}
		code, out, _ := cli(append([]string{"__complete"}, args...)...)
		if code != exitOK {
			t.Errorf("%v: exit %d", tt.args, code)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: completions lack %q:\n%s", tt.args, w, out)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(out, w) {
				t.Errorf("%v: completions offer %q:\n%s", tt.args, w, out)
			}
		}
	}
}
