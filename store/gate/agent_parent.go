package gate

import (
	"os"
	"path/filepath"
	"strconv"
)

// AgentGeminiCLI is the agent name Gemini CLI's requests carry.
const AgentGeminiCLI = "gemini-cli"

// ParentAgent is the process that ran this hook, past the shell it ran the
// hook's command with. For a CLI that starts its hooks as plain children
// (Gemini CLI spawns `bash -c COMMAND` in its own session and process
// group), AgentProcess's walk to the session's edge would name the user's
// terminal instead. 0 where /proc cannot tell.
func ParentAgent() (pid int, start string) {
	pid, _, _ = procParent(os.Getpid())
	for i := 0; pid > 1 && i < 4; i++ {
		n, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		if err != nil {
			return 0, ""
		}
		switch filepath.Base(n) {
		case "sh", "bash", "dash", "zsh", "busybox":
			pid, _, _ = procParent(pid)
			continue
		}
		return pid, procStart(pid)
	}
	return 0, ""
}
