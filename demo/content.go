package demo

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/vigil-run/vigil/store"
)

// world is what a seed decides before anything runs: the project, the
// release, who answers, and which earlier runs the store remembers.
type world struct {
	project  string // repository and binary name
	ws       string // workspace root
	version  string // the release the live tree cuts
	prev     string // the release before it
	provider string
	model    string
	history  []historyRun
}

var projects = []string{"acme-cli", "tally", "quarry", "lumen", "packrat"}

func newWorld(seed int64) *world {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	p := projects[r.IntN(len(projects))]
	major, minor := r.IntN(2), 3+r.IntN(7)
	w := &world{
		project:  p,
		ws:       "/home/dev/src/" + p,
		version:  fmt.Sprintf("%d.%d.0", major, minor),
		prev:     fmt.Sprintf("%d.%d.%d", major, minor-1, r.IntN(4)),
		provider: "openrouter",
		model:    "anthropic/claude-sonnet-4.5",
	}
	w.history = pickHistory(r, w)
	return w
}

func num(id string) int64 {
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

// policyJSON is the serde JSON of the io-harness Policy the live tree runs
// under (run_policies.policy).
func (w *world) policyJSON() string {
	type rule struct {
		Act     string `json:"act"`
		Effect  string `json:"effect"`
		Pattern string `json:"pattern"`
	}
	type layer struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	}
	type defaults struct {
		Read  string `json:"read"`
		Write string `json:"write"`
		Exec  string `json:"exec"`
		Net   string `json:"net"`
	}
	p := struct {
		Layers   []layer  `json:"layers"`
		Defaults defaults `json:"defaults"`
	}{
		Layers: []layer{
			{Name: "project", Rules: []rule{
				{"write", "allow", "src/**"},
				{"write", "allow", "docs/**"},
				{"write", "allow", "*.md"},
				{"write", "deny", ".git/**"},
				{"write", "deny", ".env"},
				{"exec", "allow", "go"},
				{"exec", "allow", "make test"},
				{"exec", "ask", "rm *"},
			}},
			{Name: "provider", Rules: []rule{{"net", "allow", "openrouter.ai:443"}}},
		},
		Defaults: defaults{Read: "allow", Write: "ask", Exec: "ask", Net: "deny"},
	}
	return compactJSON(p)
}

// The repository the agents work on. Only what they read or write exists.

func (w *world) readme() string {
	return joinLines(
		"# "+w.project,
		"",
		w.project+" reads project manifests and prints what they depend on.",
		"",
		"## Install",
		"",
		"    go install example.com/"+w.project+"/cmd/"+w.project+"@v"+w.prev,
		"",
		"## Release checklist",
		"",
		"1. Fix the open TODOs in src/ (grep for them).",
		"2. Write the release pipeline to deploy/release.yaml.",
		"3. `rm -rf build/ && make release` builds the archives and checksums.",
		"4. Add the release to CHANGELOG.md and update the install line above.",
	)
}

func (w *world) gomod() string {
	return joinLines("module example.com/"+w.project, "", "go 1.24", "", "require golang.org/x/mod v0.22.0")
}

func (w *world) makefile() string {
	return joinLines(
		"VERSION ?= "+w.version,
		"",
		".PHONY: test release clean",
		"",
		"test:",
		"\tgo test ./...",
		"",
		"release: test",
		"\tgoreleaser release --clean --skip=publish --config deploy/release.yaml",
		"",
		"clean:",
		"\trm -rf build/",
	)
}

const parseBefore = `package parse

import (
	"fmt"
	"strings"
)

// Document is a parsed project manifest.
type Document struct {
	Name    string
	Version string
	Deps    []string
}

// Parse reads a manifest: "key = value" lines and '#' comments.
func Parse(src string) (*Document, error) {
	doc := &Document{}
	// TODO: accept CRLF line endings
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: expected key = value", n+1)
		}
		value = unquote(strings.TrimSpace(value))
		switch strings.TrimSpace(key) {
		case "name":
			doc.Name = value
		case "version":
			doc.Version = value
		case "deps":
			// TODO: decide what an empty deps list means
			doc.Deps = strings.Split(value, ",")
		}
	}
	return doc, nil
}

func unquote(s string) string {
	if s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}
`

// parseCRLF is parse.go after the parser agent's first edit.
var parseCRLF = strings.Replace(parseBefore,
	"\t// TODO: accept CRLF line endings\n\tfor n, line := range strings.Split(src, \"\\n\") {",
	"\tsrc = strings.ReplaceAll(src, \"\\r\\n\", \"\\n\")\n\tfor n, line := range strings.Split(src, \"\\n\") {", 1)

// parseEmpty applies the operator's answer about empty input.
func parseEmpty(src string, asError bool) string {
	if asError {
		src = strings.Replace(src, "import (\n\t\"fmt\"\n", "import (\n\t\"errors\"\n\t\"fmt\"\n", 1)
		src = strings.Replace(src, "// Parse reads a manifest",
			"// ErrEmptyInput is returned for a manifest with nothing in it.\nvar ErrEmptyInput = errors.New(\"empty manifest\")\n\n// Parse reads a manifest", 1)
		src = strings.Replace(src, "\tdoc := &Document{}\n",
			"\tif strings.TrimSpace(src) == \"\" {\n\t\treturn nil, ErrEmptyInput\n\t}\n\tdoc := &Document{}\n", 1)
	} else {
		src = strings.Replace(src, "// Parse reads a manifest: \"key = value\" lines and '#' comments.",
			"// Parse reads a manifest: \"key = value\" lines and '#' comments.\n// Empty input is an empty Document, not an error.", 1)
	}
	return strings.Replace(src, "\t\t\t// TODO: decide what an empty deps list means\n\t\t\tdoc.Deps = strings.Split(value, \",\")",
		"\t\t\tif value != \"\" {\n\t\t\t\tdoc.Deps = strings.Split(value, \",\")\n\t\t\t}", 1)
}

// parseFixed is the fuzz agent's fix for the crash it found.
func parseFixed(src string) string {
	return strings.Replace(src, "\tif s[0] == '\"' && s[len(s)-1] == '\"' {",
		"\tif len(s) >= 2 && s[0] == '\"' && s[len(s)-1] == '\"' {", 1)
}

const fuzzTest = `package parse

import "testing"

func FuzzParse(f *testing.F) {
	f.Add("name = demo\nversion = 1.0.0\n")
	f.Add("deps = a,b,c\r\n")
	f.Add("# only a comment\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, src string) {
		doc, err := Parse(src)
		if err == nil && doc == nil {
			t.Fatalf("Parse(%q) returned neither a document nor an error", src)
		}
	})
}
`

const lexerGo = `package parse

// TODO: report the column of a bad line, not only its number
func position(src string, offset int) (line, col int) {
	line = 1
	for i := 0; i < offset && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			col = 0
			continue
		}
		col++
	}
	return line, col + 1
}
`

func (w *world) releaseYAML() string {
	return joinLines(
		"# deploy/release.yaml: release pipeline for "+w.project+" "+w.version,
		"# Used by `make release`; archives and checksums land in build/.",
		"version: 2",
		"project_name: "+w.project,
		"dist: build",
		"",
		"before:",
		"  hooks:",
		"    - go mod tidy",
		"    - go test ./...",
		"",
		"builds:",
		"  - id: "+w.project,
		"    main: ./cmd/"+w.project,
		"    binary: "+w.project,
		"    env:",
		"      - CGO_ENABLED=0",
		"    goos: [linux, darwin, windows]",
		"    goarch: [amd64, arm64]",
		"    ldflags:",
		"      - -s -w",
		"      - -X main.version={{ .Version }}",
		"",
		"archives:",
		"  - formats: [tar.gz]",
		"    name_template: \""+w.project+"_{{ .Version }}_{{ .Os }}_{{ .Arch }}\"",
		"    format_overrides:",
		"      - goos: windows",
		"        formats: [zip]",
		"",
		"checksum:",
		"  name_template: \""+w.project+"_{{ .Version }}_checksums.txt\"",
		"  algorithm: sha256",
		"",
		"changelog:",
		"  sort: asc",
		"  filters:",
		"    exclude:",
		"      - \"^docs:\"",
		"      - \"^test:\"",
		"",
		"release:",
		"  draft: true",
		"  prerelease: auto",
	)
}

func (w *world) checksums(r *rand.Rand) string {
	var lines []string
	for _, target := range []string{"darwin_amd64.tar.gz", "darwin_arm64.tar.gz", "linux_amd64.tar.gz", "linux_arm64.tar.gz", "windows_amd64.zip", "windows_arm64.zip"} {
		lines = append(lines, fmt.Sprintf("%016x%016x%016x%016x  %s_%s_%s", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64(), w.project, w.version, target))
	}
	return joinLines(lines...)
}

func (w *world) makeReleaseOutput() string {
	return joinLines(
		"go test ./...",
		"ok  \texample.com/"+w.project+"/src\t0.412s",
		"ok  \texample.com/"+w.project+"/cmd/"+w.project+"\t0.087s",
		"goreleaser release --clean --skip=publish --config deploy/release.yaml",
		"  • starting release...",
		"  • loading                                          path=deploy/release.yaml",
		"  • building binaries",
		"    • building                                       binary=build/"+w.project+"_linux_amd64_v1/"+w.project,
		"    • building                                       binary=build/"+w.project+"_darwin_arm64_v8.0/"+w.project,
		"    • building                                       binary=build/"+w.project+"_windows_amd64_v1/"+w.project+".exe",
		"  • archives",
		"  • calculating checksums",
		"  • release succeeded after 41s",
	)
}

func (w *world) gitLog() string {
	return joinLines(
		"a41c9e2 parse: reject a manifest without a name",
		"9f03b11 cli: add --json to status",
		"77d2e0a deps: bump golang.org/x/mod to v0.22.0",
		"3b8e5c4 docs: explain the manifest format",
		"e2d7a90 cli: colour the dependency tree when stdout is a terminal",
		"c0ffee1 release v"+w.prev,
	)
}

func (w *world) changelog(extra string) string {
	lines := []string{
		"# Changelog",
		"",
		"## " + w.version,
		"",
		"- `status --json` prints the dependency tree as JSON.",
		"- Manifests with Windows (CRLF) line endings parse.",
		"- A quoted empty value no longer crashes the parser (found by fuzzing).",
		"- Colour the dependency tree when stdout is a terminal.",
		"- golang.org/x/mod v0.22.0.",
	}
	if extra != "" {
		lines = append(lines, "- "+extra)
	}
	lines = append(lines, "", "## "+w.prev, "", "- Fix `deps` for manifests with a trailing comma.")
	return joinLines(lines...)
}

// workspaceMap is the repository overview every prompt starts from.
func (w *world) workspaceMap() string {
	p := w.project
	files := []string{
		".github/workflows/ci.yml  1.2 KiB", ".gitignore  214 B", "CHANGELOG.md  3.8 KiB", "LICENSE  11.1 KiB",
		"Makefile  402 B", "README.md  2.6 KiB", "cmd/" + p + "/check.go  1.9 KiB", "cmd/" + p + "/main.go  2.2 KiB",
		"cmd/" + p + "/status.go  1.4 KiB", "cmd/" + p + "/status_test.go  3.1 KiB", "cmd/" + p + "/tree.go  2.8 KiB",
		"cmd/" + p + "/version.go  311 B", "deploy/Dockerfile  640 B", "deploy/k8s.yaml  1.7 KiB", "docs/cli.md  1.1 KiB",
		"docs/manifest.md  4.4 KiB", "go.mod  96 B", "go.sum  1.3 KiB", "internal/cache/lru.go  3.3 KiB",
		"internal/cache/lru_test.go  2.9 KiB", "internal/config/config.go  1.8 KiB", "internal/config/config_test.go  2.0 KiB",
		"internal/config/defaults.go  1.1 KiB", "internal/resolve/graph.go  5.6 KiB", "internal/resolve/graph_test.go  6.2 KiB",
		"internal/resolve/semver.go  3.0 KiB", "internal/resolve/semver_test.go  4.7 KiB", "src/lexer.go  412 B",
		"src/parse.go  1.1 KiB", "src/parse_test.go  2.3 KiB", "testdata/large/kubernetes.manifest  88.2 KiB",
		"testdata/large/monorepo.manifest  141.9 KiB", "testdata/small/basic.manifest  97 B",
		"testdata/small/comments.manifest  188 B", "testdata/small/quoted.manifest  121 B",
	}
	return "\n## Workspace (" + strconv.Itoa(len(files)) + " files)\n" + strings.Join(files, "\n") + "\n"
}

func (w *world) changelogBefore() string {
	return joinLines("# Changelog", "", "## "+w.prev, "", "- Fix `deps` for manifests with a trailing comma.")
}

func (w *world) cliHelp() string {
	return joinLines(
		"Usage: "+w.project+" <command> [flags]",
		"",
		"Commands:",
		"  status    print the manifest and its dependency tree",
		"  check     validate a manifest and exit non-zero on errors",
		"  version   print the version",
		"",
		"Flags:",
		"  --json          print JSON instead of text",
		"  --manifest PATH read PATH instead of ./project.manifest",
		"  --no-color      never colour the output",
	)
}

func (w *world) cliDoc() string {
	return "# " + w.project + " command line\n\nGenerated from `" + w.project + " --help` for " + w.version + ".\n\n```\n" + w.cliHelp() + "```\n"
}

// releaseNotes is what the coordinator writes last: what each worker
// achieved (endings by address) and what the operator decided.
func (w *world) releaseNotes(endings map[string]store.Outcome, denied, answer string) string {
	lines := []string{"# " + w.project + " " + w.version, ""}
	if endings["parser"] == store.OutcomeSuccess {
		lines = append(lines, "- Parser: CRLF manifests and empty deps lists; a crash on an empty quoted value found by fuzzing and fixed.")
	}
	if answer != "" {
		lines = append(lines, "- Empty input: "+answer+" (the operator's decision).")
	}
	if endings["docs"] == store.OutcomeSuccess {
		lines = append(lines, "- CHANGELOG.md, README.md and docs/cli.md are up to date.")
	} else {
		lines = append(lines, "- Docs: not updated ("+string(endings["docs"])+").")
	}
	switch {
	case denied != "":
		lines = append(lines, "", "Not done: the operator denied "+denied+". Do it by hand.")
	case endings["release"] == store.OutcomeSuccess:
		lines = append(lines, "- deploy/release.yaml describes the release build.", "", "Archives and checksums are in build/.")
	default:
		lines = append(lines, "", "Not done: the release build ("+string(endings["release"])+").")
	}
	return joinLines(lines...)
}
