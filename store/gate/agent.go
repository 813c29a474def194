package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// AgentProcess finds the agent CLI that ran this hook: the first ancestor
// outside the hook's own session (Claude Code starts each hook as
// `sh -c …` in a session of its own, so the hook's parent outlives an
// agent that is killed), else the parent past a shell wrapper. 0 where
// /proc cannot tell.
func AgentProcess() (pid int, start string) {
	self := os.Getpid()
	_, _, sid := procParent(self)
	pid, _, _ = procParent(self)
	first := pid
	for i := 0; pid > 1 && i < 16; i++ {
		ppid, _, psid := procParent(pid)
		if psid != sid {
			return pid, procStart(pid)
		}
		pid = ppid
	}
	pid = first
	if n, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil {
		switch filepath.Base(n) {
		case "sh", "bash", "dash", "zsh", "busybox":
			pid, _, _ = procParent(pid)
		}
	}
	if pid <= 1 {
		return 0, ""
	}
	return pid, procStart(pid)
}

// procParent reads pid's parent, process group and session from /proc.
func procParent(pid int) (ppid, pgrp, sid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return 0, 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	pgrp, _ = strconv.Atoi(f[2])
	sid, _ = strconv.Atoi(f[3])
	return ppid, pgrp, sid
}

// Exited is closed when process pid (started at start) exits, told by the
// kernel through a pidfd: no polling. An error says it cannot be watched
// (no pidfd on this kernel); a process already gone closes at once.
func Exited(pid int, start string) (<-chan struct{}, error) {
	done := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		close(done)
		return done, nil
	}
	if err != nil {
		return nil, err
	}
	// Opened after the pid was read: make sure it is still that process.
	if !alive(pid, start) {
		unix.Close(fd)
		close(done)
		return done, nil
	}
	go func() {
		defer unix.Close(fd)
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}()
	return done, nil
}
