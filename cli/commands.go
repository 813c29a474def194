package cli

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/demo"
	"github.com/vigil-run/vigil/remote"
	"github.com/vigil-run/vigil/store"
)

const storeHelp = "the run store: a file, or a directory for journal formats (default $VIGIL_STORE, else the config file's store, else the usual places)"

func (a *app) rootCmd() *cobra.Command {
	var o exploreOpts
	root := &cobra.Command{
		Use:   "vigil [PATH]",
		Short: "A terminal explorer for durable AI-agent runs",
		Long: `vigil explores the runs an agent harness records: the agent tree, each step,
the context window, and what a run waits on a human for.

With no command it opens the explorer on PATH, --store, $VIGIL_STORE, or the
first store found in the usual places (./runs.sqlite3, other ./*.sqlite3
io-harness stores, Starweaver's and Leviath's default locations). PATH may be
ssh://[user@]host[:port]/path, a store on another machine; several PATHs open
in one explorer, with one runs list and one approval queue.`,
		Example: `# open the store in the current directory (or the first one found)
vigil
# open a store, with run 12 on screen first
vigil runs.sqlite3 --run 12
# several stores at once, one of them on another machine: one runs list
vigil a.sqlite3 b.sqlite3 ssh://build1/srv/runs.sqlite3
# watch a simulated release, live
vigil demo
# the runs waiting on a human, for a script
vigil runs --json | jq '.runs[] | select(.state == "waiting")'`,
		Args:          usageArgs(cobra.ArbitraryArgs),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command's --poll is checked here (poll.go).
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPoll(cmd); err != nil {
				return err
			}
			return checkSpeed(cmd) // usage_words.go
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				if o.store != "" {
					return usagef("several stores named and --store %q: name them all as arguments", o.store)
				}
				for _, a := range args {
					if looksLikeCommand(a) {
						return unknownCommand(cmd, a)
					}
				}
				return a.runSeveral(cmd.Context(), o, args)
			}
			path := o.store
			if len(args) == 1 {
				if o.store != "" && o.store != args[0] {
					return usagef("two stores named: %q and --store %q", args[0], o.store)
				}
				if looksLikeCommand(args[0]) {
					return unknownCommand(cmd, args[0])
				}
				path = args[0]
			}
			if remote.IsURL(path) {
				return a.runRemote(cmd.Context(), o, path)
			}
			if path == "" {
				if named, err := a.named(nil); err != nil {
					return err
				} else if !named {
					found, err := a.discover()
					if err != nil {
						return err
					}
					if len(found) > 1 {
						return a.runSeveral(cmd.Context(), o, found)
					}
				}
			}
			resolved, err := a.resolveStore(path)
			if err != nil {
				return err
			}
			o.store = resolved
			return a.runExplorer(cmd.Context(), o)
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{flagWords(err)} })
	f := root.Flags()
	f.StringVar(&o.store, "store", "", storeHelp)
	f.BoolVar(&o.readOnly, "read-only", false, "browse only: no decision can be made")
	f.DurationVar(&o.poll, "poll", 0, "poll the store at this interval instead of using file events (e.g. 500ms)")
	f.StringVar(&o.run, "run", "", "the run to open first (default: the newest live one)")
	root.AddCommand(a.demoCmd(), a.demoHarnessCmd(), a.runsCmd(), a.showCmd(), a.tailCmd(),
		a.decideCmd(verbApprove), a.decideCmd(verbDeny),
		a.textDecideCmd(verbAnswer, "QUESTION", "Answer a question a run asks",
			"answer answers a question (4 or question:4). TEXT is the answer; several words\n"+
				"are joined with spaces, and - reads it from standard input. A number that names\n"+
				"one of the question's choices sends that choice's text, as the explorer does;\n"+
				"--raw sends TEXT as typed."),
		a.textDecideCmd(verbRevise, "PLAN", "Send a plan back with a correction",
			"revise sends a proposed plan (3 or plan:3) back to its run with TEXT as the\n"+
				"correction; several words are joined with spaces, and - reads it from standard input."),
		a.traceCmd(), a.diffCmd(), a.otelCmd(), a.configCmd(), a.serveCmd(), a.agentCmd(), a.gateCmd())
	return root
}

// exists reports whether anything is at p (a dangling symbolic link too).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// looksLikeCommand tells a mistyped command from a store path: no file by
// that name, and nothing that makes it look like a path.
func looksLikeCommand(arg string) bool {
	if strings.ContainsAny(arg, `/\.~`) {
		return false
	}
	_, err := os.Stat(arg)
	return err != nil
}

func unknownCommand(root *cobra.Command, arg string) error {
	if c, _, err := root.Find([]string{arg}); err == nil && c != root {
		// `vigil STORE tail 1`: the command is real, only out of place.
		return usagef("%s is a command: it comes first, the store after --store (vigil %s … --store STORE)", quote(arg), arg)
	}
	msg := "unknown command " + quote(arg) + ", and no store file of that name"
	if s := root.SuggestionsFor(arg); len(s) > 0 {
		msg += "; did you mean " + quote(s[0]) + "?"
	}
	return &usageError{errString(msg)}
}

type errString string

func (e errString) Error() string { return string(e) }

func quote(s string) string { return `"` + s + `"` }

func (a *app) demoCmd() *cobra.Command {
	var o demoOpts
	c := &cobra.Command{
		Use:   "demo",
		Short: "Watch a simulated agent tree cut a release, live",
		Long: `demo runs a simulated multi-agent harness (no model, no network) that writes
an io-harness store the way io-harness would, and opens the explorer on it.
Approve, deny and answer what the agents wait on as they ask. Quitting the
explorer stops the demo.

The store is temporary (deleted on exit) unless --store names a new file to
keep. --no-tui prints the demo's log instead of opening the explorer; decide
its requests from another terminal with vigil approve/deny/answer --store.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Refused before anything starts or is printed: one line.
			if o.store != "" {
				if p := a.expandHome(o.store); exists(p) {
					return store.Errorf(abs(p), store.ErrExists, nil, "%s", store.Because(store.ErrExists, "refusing to create a store over it"))
				}
			}
			return a.runDemo(cmd.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.store, "store", "", "write the demo store to this new file and keep it (default: a temporary file)")
	f.Float64Var(&o.speed, "speed", 1, "pace multiplier: 1 is human-watchable, 10 is ten times faster")
	f.Int64Var(&o.seed, "seed", demo.DefaultSeed, "scenario seed: the same seed plays the same release")
	f.BoolVar(&o.noTUI, "no-tui", false, "print the demo's log lines instead of opening the explorer")
	f.DurationVar(&o.poll, "poll", 0, "poll the store at this interval instead of using file events")
	f.StringVar(&o.otel, "otel", "", "also export the demo, live, to this OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318 for Jaeger)")
	return c
}

func (a *app) runsCmd() *cobra.Command {
	var o struct {
		stores []string
		json   bool
	}
	c := &cobra.Command{
		Use:   "runs",
		Short: "List every run, roots and children, newest first",
		Long: `runs lists every run in the store, newest first: its id, parent and depth,
its state (running, waiting, paused, stale, crashed, finished), the store's
status and outcome, steps, tokens, when it started and how long it took, and
its goal. --json prints the same as a stable JSON document (see docs/cli.md).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withNamed(cmd.Context(), o.stores, true, "vigil runs", func(s *session) error { return a.runs(cmd.Context(), s, o.json) })
		},
	}
	c.Flags().StringArrayVar(&o.stores, "store", nil, storesHelp)
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

func (a *app) showCmd() *cobra.Command {
	var o struct {
		stores         []string
		json, markdown bool
	}
	c := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: its tree, steps, context samples and open requests",
		Long: `show prints one run: its tree of agents (each with its state, steps and
tokens), its steps (number, decision, tool call, tokens, retries), its context
samples (the assembler's estimate beside what the provider reported, and the
drift between them), and the requests its tree waits on. --json prints a
stable JSON document; --markdown a readable export.`,
		Args: usageArgs(exactArgs("RUN")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.json && o.markdown {
				return usagef("--json and --markdown cannot be used together")
			}
			return a.withNamed(cmd.Context(), o.stores, false, "vigil show", func(s *session) error {
				return a.show(cmd.Context(), s, args[0], o.json, o.markdown)
			})
		},
	}
	c.Flags().StringArrayVar(&o.stores, "store", nil, storesHelp)
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	c.Flags().BoolVar(&o.markdown, "markdown", false, "print a Markdown export")
	return c
}

func (a *app) tailCmd() *cobra.Command {
	var o struct {
		stores  []string
		poll    time.Duration
		forever bool
		json    bool
	}
	c := &cobra.Command{
		Use:   "tail RUN",
		Short: "Print a run's steps as they are committed, until it stops",
		Long: `tail prints one line per step of the run and of every agent under it, each
prefixed with the agent's run id:

  #RUN step N  decision  →  first line of the result  (tokens)

A request in the tree prints a line when it is asked and when it is decided:

  #RUN waits on a human: approval:2 write CHANGELOG.md
  #RUN approval:2 decided: approve

It prints the steps already committed, then follows the store (file events,
or --poll); --json prints each line as a JSON object. When the run stops it prints a last line saying how, and exits:

  0  finished and succeeded (and on Ctrl-C)
  4  finished without succeeding (the outcome says how)
  5  paused until its host resumes it, or waiting on a recovery decision
  6  crashed: its driver is gone

A run parked on a human by a live driver has not stopped: tail waits.
--forever never stops: it prints the line and goes on following, for a run
that may be resumed. Output is written a line at a time.`,
		Args: usageArgs(exactArgs("RUN")),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withNamed(cmd.Context(), o.stores, true, "vigil tail", func(s *session) error {
				return a.tail(cmd.Context(), s, args[0], o.poll, o.forever, o.json)
			})
		},
	}
	c.Flags().StringArrayVar(&o.stores, "store", nil, storesHelp)
	c.Flags().DurationVar(&o.poll, "poll", 0, "poll the store at this interval instead of using file events")
	c.Flags().BoolVar(&o.forever, "forever", false, "keep following after the run finishes, pauses or crashes")
	c.Flags().BoolVar(&o.json, "json", false, "print one JSON object a line: steps, requests asked and decided, the stop")
	return c
}

const requestHelp = `REQ is an approval id (12) or a typed key: approval:12, plan:3, question:4.`

func (a *app) decideCmd(verb string) *cobra.Command {
	var o decideOpts
	c := &cobra.Command{
		Use:  verb + " REQ",
		Args: usageArgs(exactArgs("REQ")),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.decide(cmd.Context(), o, verb, args[0], "")
		},
	}
	if verb == verbApprove {
		c.Short = "Approve an approval or a plan"
		c.Long = "approve approves what a run waits on: an approval (the action goes ahead) or a plan.\n" + requestHelp +
			"\n\n--always also takes what the agent offers to allow from now on without asking\n" +
			"(Claude Code's \"yes, and don't ask again\"; 'vigil show' names it)." + decideTail
		c.Flags().BoolVar(&o.always, "always", false, "approve, and let the agent allow what the request offers from now on")
	} else {
		c.Short = "Deny an approval, or cancel a plan"
		c.Long = "deny denies an approval (the action does not happen) or cancels a plan.\n" + requestHelp +
			"\n\n--reason TEXT is sent with the deny where the format carries one to the agent\n" +
			"(Starweaver's approval record); where it does not (io-harness), vigil refuses\n" +
			"rather than drop it." + decideTail
		c.Flags().StringVar(&o.reason, "reason", "", "why: sent to the agent with the deny, where the format carries it")
	}
	o.flags(c)
	return c
}

const decideTail = `

The decision is written only if the request is still undecided and its run
can read it now (live and parked on it); otherwise vigil says why and exits 3.`

// textDecideCmd is a decision that carries TEXT: answer and revise.
func (a *app) textDecideCmd(verb, req, short, long string) *cobra.Command {
	var o decideOpts
	c := &cobra.Command{
		Use:   verb + " " + req + " TEXT",
		Short: short,
		Long:  long + decideTail,
		Args:  usageArgs(atLeastArgs(req, "TEXT")),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.decide(cmd.Context(), o, verb, args[0], strings.Join(args[1:], " "))
		},
	}
	o.flags(c)
	if verb == verbAnswer {
		c.Flags().BoolVar(&o.raw, "raw", false, "send TEXT as typed, a number too (else a number naming a choice sends that choice)")
	}
	return c
}

type decideOpts struct {
	stores   []string
	readOnly bool
	reason   string // deny: the reason, where the format carries one
	always   bool   // approve: with the request's always-allow
	raw      bool   // answer: send the text as typed, a number too (store.ChoiceAnswer)
}

func (o *decideOpts) flags(c *cobra.Command) {
	c.Flags().StringArrayVar(&o.stores, "store", nil, storesHelp+" (a request is then store/id: approve b/12)")
	c.Flags().BoolVar(&o.readOnly, "read-only", false, "open the store read-only (the decision is then refused)")
}

func (a *app) traceCmd() *cobra.Command {
	var stores []string
	var raw bool
	c := &cobra.Command{
		Use:   "trace RUN",
		Short: "Print a run's canonical trace",
		Long: `trace prints io-harness's canonical trace of a run: a line per step row
(retries included) ordered by step, then a line per context event, without
ids or timestamps, so two runs of the same task compare line by line.
Control characters in it (a model's escape sequences) are shown as visible
stand-ins, wherever the output goes; --raw writes the trace byte for byte.`,
		Args: usageArgs(exactArgs("RUN")),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withNamed(cmd.Context(), stores, true, "vigil trace", func(s *session) error { return a.trace(cmd.Context(), s, args[0], raw) })
		},
	}
	c.Flags().StringArrayVar(&stores, "store", nil, storesHelp)
	c.Flags().BoolVar(&raw, "raw", false, "write the trace byte for byte, control characters and all (for a file, not a terminal)")
	return c
}

func (a *app) diffCmd() *cobra.Command {
	var store string
	var fields []string
	c := &cobra.Command{
		Use:   "diff RUN_A RUN_B",
		Short: "Compare two runs' canonical traces, step by step",
		Long: `diff aligns two runs' canonical traces by step and prints, for each step that
differs, the fields that differ (- run A, + run B): a field of one line
whole, a field of several lines (a prompt, a result) as a line-level diff
with 3 lines of context. The first line after the header names the first
divergence ("first divergence: step 3 (decision)"); it prints "identical"
when the traces are the same.

--fields compares only some fields: tokens, decision, tool_call, prompt,
result, context (comma-separated, or the flag given again).

Like diff(1), it exits 0 when the runs are the same in the fields compared
and 1 when they differ; an error is also exit 1, with a message on
standard error and nothing on standard output.`,
		Example: `vigil diff 8 10
vigil diff 8 10 --fields decision,tool_call,result`,
		Args: usageArgs(exactArgs("RUN_A", "RUN_B")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := parseFields(fields); err != nil {
				return err
			}
			return a.withSource(store, func(s *session) error { return a.diff(cmd.Context(), s, args[0], args[1], fields) })
		},
	}
	c.Flags().StringVar(&store, "store", "", storeHelp)
	c.Flags().StringSliceVar(&fields, "fields", nil, "compare only these fields: "+strings.Join(diffFields, ", "))
	return c
}
