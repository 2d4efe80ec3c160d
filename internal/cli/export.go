package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

func newExportCmd() *cobra.Command {
	var (
		sf       settingFlags
		seed     uint64
		variants bool
		dir      string
		force    bool
		format   string
	)
	cmd := &cobra.Command{
		Use:   "export MISSION...",
		Short: "Write cases as JSON files (or Markdown write-ups), one per mission and settings",
		Long: "Run each mission and write its case as JSON into --dir, one file per case,\n" +
			"named after the mission and its settings. With --variants, write one case\n" +
			"for each setting the mission contrasts (the settings its expectations name).\n" +
			"With --format markdown, write a Markdown write-up of each case instead of its\n" +
			"JSON, under the same name ending in .md; export again without it for the\n" +
			"JSON that compare and replay read.\n" +
			"Files are written atomically and existing files are kept unless --force.",
		Example: "  replaylab export timeout-then-success --variants --dir cases\n" +
			"  replaylab export failure-then-failure --stable-keys=off --dir cases\n" +
			"  replaylab export timeout-then-success --variants --format markdown --dir write-ups",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := loadCatalog(cmd)
			if err != nil {
				return err
			}
			f, err := render.ParseFormat(format)
			if err != nil {
				return badInput(fmt.Errorf("--format: %w", err))
			}
			if f == render.Text {
				return badInput(fmt.Errorf("--format text: export writes files; accepted: json, markdown"))
			}
			if variants {
				for _, name := range missions.SettingFlags {
					if cmd.Flags().Changed(name) {
						return badInput(fmt.Errorf("--%s and --variants do not go together: --variants exports the settings each mission contrasts", name))
					}
				}
			}
			if dir == "" {
				return badInput(fmt.Errorf("--dir is empty; give a directory (default %s, created if missing)", export.DefaultCaseDir))
			}
			if err := checkDir("--dir", dir); err != nil {
				return err
			}
			var runs []export.Job
			for _, id := range args {
				m, err := cat.Get(id)
				if err != nil {
					return badInput(err)
				}
				if !variants {
					s, err := settingsFor(cmd, m, &sf, seed)
					if err != nil {
						return err
					}
					runs = append(runs, export.Job{Mission: m, Settings: s})
					continue
				}
				for _, e := range m.Expect {
					s, err := withRunFlags(cmd, m.Settings(e.When), seed)
					if err != nil {
						return err
					}
					runs = append(runs, export.Job{Mission: m, Settings: s})
				}
			}
			ext := ".json"
			if f == render.Markdown {
				ext = ".md"
			}
			jobs := export.Plan(dir, ext, runs)
			// Everything is checked and run before the first file is
			// written, so a refusal leaves the directory as it was.
			for _, j := range jobs {
				if err := checkWritable(j.Path, force, true); err != nil {
					return err
				}
			}
			cases := make([]*missions.Case, len(jobs))
			files := make([]atomicfile.File, len(jobs))
			for i, j := range jobs {
				if cases[i], err = missions.Run(j.Mission, j.Settings); err != nil {
					return badInput(err)
				}
				data, err := render.Case(cases[i], f, render.DefaultTextWidth)
				if err != nil {
					return err
				}
				files[i] = atomicfile.File{Path: j.Path, Data: data}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return badInput(fmt.Errorf("--dir %s: cannot create it: %w", dir, cause(err)))
			}
			if err := writeAll(files, force); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for i, j := range jobs {
				fmt.Fprintf(w, "wrote %s  (%s)\n", termtext.CleanLine(j.Path), caseBrief(cases[i]))
			}
			return nil
		},
	}
	sf.register(cmd)
	registerSeed(cmd, &seed)
	cmd.Flags().BoolVar(&variants, "variants", false, "one case per setting the mission contrasts")
	cmd.Flags().StringVar(&dir, "dir", export.DefaultCaseDir, "write the case files into `DIR` (created if missing)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite case files that exist")
	cmd.Flags().StringVar(&format, "format", string(render.JSON), "what to write: json (the case) or markdown (a write-up, as .md)")
	registerMissionsDir(cmd)
	return cmd
}

// caseBrief sums a case up in a few words: effects and verdicts.
func caseBrief(c *missions.Case) string {
	var vs []string
	for _, v := range c.Outcome.Verdicts {
		vs = append(vs, termtext.CleanLine(v.Intent)+" "+string(v.Verdict))
	}
	return fmt.Sprintf("%s; %s", termtext.Plural(c.Outcome.Effects, "effect"), strings.Join(vs, ", "))
}
