package agentcli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// setupIn is what a CLI's set-up knows of the run.
type setupIn struct {
	home, work, url string
	cache           string // the CLI's install prefix, for what it caches across runs
	prompt          string
}

// kind is how one CLI runs headless against the model server: the files
// it needs under HOME, its environment, its arguments, and where it
// writes its sessions (globs under HOME).
type kind struct {
	setup func(in setupIn) (files map[string]string, env, args []string)
	store []string
}

var kinds = map[string]kind{
	"claude-code": {
		setup: func(in setupIn) (map[string]string, []string, []string) {
			return nil, []string{
					"ANTHROPIC_BASE_URL=" + in.url,
					"ANTHROPIC_API_KEY=sk-ant-vigil-test",
					"DISABLE_AUTOUPDATER=1",
					"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
					"DISABLE_TELEMETRY=1",
					"DISABLE_ERROR_REPORTING=1",
				}, []string{"-p", in.prompt, "--output-format", "stream-json", "--verbose",
					"--allowedTools", "Bash", "Agent", "Task"}
		},
		store: []string{".claude/projects/*/*.jsonl", ".claude/projects/*/*/subagents/*.jsonl"},
	},
	"codex": {
		setup: func(in setupIn) (map[string]string, []string, []string) {
			config := fmt.Sprintf(`model = "gpt-5-vigil-test"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = %q
env_key = "MOCK_API_KEY"
wire_api = "responses"

[analytics]
enabled = false
`, in.url+"/v1")
			return map[string]string{".codex/config.toml": config},
				[]string{"MOCK_API_KEY=vigil-test", "CODEX_HOME=" + filepath.Join(in.home, ".codex")},
				[]string{"exec", "--skip-git-repo-check", "--json",
					"--dangerously-bypass-approvals-and-sandbox", in.prompt}
		},
		store: []string{".codex/sessions/*/*/*/rollout-*.jsonl"},
	},
	"gemini-cli": {
		setup: func(in setupIn) (map[string]string, []string, []string) {
			settings := mustJSON(map[string]any{
				"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
				"privacy":  map[string]any{"usageStatisticsEnabled": false},
				"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
			})
			return map[string]string{".gemini/settings.json": settings},
				[]string{"GEMINI_API_KEY=vigil-test", "GOOGLE_GEMINI_BASE_URL=" + in.url, "GEMINI_CLI_TRUST_WORKSPACE=true"},
				[]string{"-p", in.prompt, "--yolo", "--output-format", "stream-json"}
		},
		store: []string{".gemini/tmp/*/chats/*.jsonl", ".gemini/tmp/*/chats/*/*.jsonl"},
	},
	"opencode": {
		setup: func(in setupIn) (map[string]string, []string, []string) {
			config := mustJSON(map[string]any{
				"$schema": "https://opencode.ai/config.json",
				"model":   "mock/mock-model", "small_model": "mock/mock-model",
				"autoupdate": false, "share": "disabled",
				"provider": map[string]any{"mock": map[string]any{
					"npm": "@ai-sdk/openai-compatible", "name": "Mock",
					"options": map[string]any{"baseURL": in.url + "/v1", "apiKey": "vigil-test"},
					"models": map[string]any{"mock-model": map[string]any{
						"name": "Mock Model", "tool_call": true,
						"limit": map[string]any{"context": 200000, "output": 8000}}},
				}},
				"permission": map[string]any{"bash": "allow", "edit": "allow"},
			})
			return map[string]string{".config/opencode/opencode.json": config},
				[]string{
					"OPENCODE_DISABLE_MODELS_FETCH=true", "OPENCODE_DISABLE_AUTOUPDATE=true",
					"OPENCODE_DISABLE_SHARE=true", "OPENCODE_DISABLE_LSP_DOWNLOAD=true",
					// opencode installs its plugin package (and the
					// provider's) with npm into each new HOME's config
					// directory: npm's cache is kept beside the install, and
					// npm prefers it to the registry.
					"XDG_CACHE_HOME=" + filepath.Join(in.cache, "xdg-cache"),
					"npm_config_cache=" + filepath.Join(in.cache, "npm-cache"),
					"npm_config_prefer_offline=true",
				},
				[]string{"run", "--format", "json", in.prompt}
		},
		store: []string{".local/share/opencode/opencode.db"},
	},
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}
