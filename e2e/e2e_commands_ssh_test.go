package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// vigil runs, show and approve on an ssh:// store and on a set of a local
// store and an ssh:// one, against a real sshd: ids store/id in --json, a
// decision routed by its prefix to the far file (here's own approval 2
// untouched), and recorded in both machines' audit logs.
func TestCommandsOnSSHStores(t *testing.T) {
	s := startSSHD(t)
	bin := vigilBinary(t)
	here, far := fixtureAt(t, "here.sqlite3"), fixtureAt(t, "far.sqlite3")
	url := "ssh://vigiltest" + far
	localState := filepath.Join(t.TempDir(), "state")
	env := append(os.Environ(), "VIGIL_SSH=ssh -F "+s.config, "VIGIL_REMOTE_VIGIL="+bin, "XDG_STATE_HOME="+localState)
	vigil := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	ids := func(doc string) map[string]bool {
		t.Helper()
		var d struct {
			Runs []struct {
				ID string `json:"id"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("runs --json: %v\n%s", err, doc)
		}
		out := map[string]bool{}
		for _, r := range d.Runs {
			out[r.ID] = true
		}
		return out
	}

	out, stderr, code := vigil("runs", "--json", "--store", url)
	if code != 0 || !ids(out)["4"] {
		t.Fatalf("runs on %s: exit %d, %s\n%s", url, code, stderr, out)
	}
	out, stderr, code = vigil("runs", "--json", "--store", here, "--store", url)
	if got := ids(out); code != 0 || !got["here/4"] || !got["far/4"] || got["4"] {
		t.Fatalf("runs on here and far: exit %d, %v %s", code, got, stderr)
	}
	out, stderr, code = vigil("show", "far/4", "--store", here, "--store", url)
	if code != 0 || !strings.Contains(out, "Coordinate the v2.0 release") {
		t.Fatalf("show far/4: exit %d, %s\n%s", code, stderr, out)
	}

	hereTrace, stderr, code := vigil("trace", "4", "--store", here)
	if code != 0 || hereTrace == "" {
		t.Fatalf("trace 4 of here: exit %d, %s", code, stderr)
	}
	out, stderr, code = vigil("trace", "far/4", "--store", here, "--store", url)
	if code != 0 || out != hereTrace {
		t.Errorf("trace far/4 across the link (exit %d, %s) differs from the same fixture's trace here:\n%s\n---\n%s", code, stderr, out, hereTrace)
	}
	out, stderr, code = vigil("tail", "far/1", "--store", here, "--store", url)
	if code != 0 || !strings.Contains(out, "#far/1 step 1") || !strings.Contains(out, "finished") {
		t.Errorf("tail far/1 (a finished run): exit %d, %s\n%s", code, stderr, out)
	}

	out, stderr, code = vigil("approve", "far/2", "--store", here, "--store", url)
	if code != 0 || !strings.Contains(out, "approved approval:far/2") {
		t.Fatalf("approve far/2: exit %d, %s\n%s", code, stderr, out)
	}
	if got := sqlite3CLI(t, far, "SELECT resolved FROM pending_approvals WHERE id = 2"); got != "approve" {
		t.Errorf("far's approval 2 holds %q", got)
	}
	if got := sqlite3CLI(t, here, "SELECT coalesce(resolved, 'undecided') FROM pending_approvals WHERE id = 2"); got != "undecided" {
		t.Errorf("here's approval 2 holds %q; want it untouched", got)
	}
	_, stderr, code = vigil("deny", "far/2", "--store", here, "--store", url)
	if code != 3 || !strings.Contains(stderr, "already decided") {
		t.Errorf("deny far/2 after it was approved: exit %d, %s", code, stderr)
	}

	local, _ := os.ReadFile(filepath.Join(localState, "vigil", "audit.jsonl"))
	for _, want := range []string{`"store":"` + url + `"`, `"channel":"` + url + ` (vigil approve)","outcome":"won"`,
		`"channel":"` + url + ` (vigil deny)","outcome":"lost"`} {
		if !strings.Contains(string(local), want) {
			t.Errorf("the local audit log lacks %s:\n%s", want, local)
		}
	}
	farLog, _ := os.ReadFile(filepath.Join(s.farState, "vigil", "audit.jsonl"))
	if !strings.Contains(string(farLog), `"store":"`+far+`"`) || strings.Count(string(farLog), `"outcome":"attempt"`) != 2 {
		t.Errorf("the far audit log:\n%s", farLog)
	}
}
