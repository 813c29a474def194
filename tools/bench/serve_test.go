package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// The serve row's keys are read by the stock OpenSSH tools as the bench's
// ssh client reads them: each private key gives the public key the files
// name (ssh-keygen -y), and the known_hosts line names the host key for
// the server's [address]:port (ssh-keygen -F).
func TestServeKeysReadByOpenSSH(t *testing.T) {
	keygen := testkit.Tool(t, "ssh-keygen", "the bench's keys are read back by OpenSSH's ssh-keygen")
	dir := t.TempDir()
	k, err := newServeKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.knownHost("127.0.0.1:40222"); err != nil {
		t.Fatal(err)
	}
	pub := func(file string) string {
		out, err := exec.Command(keygen, "-y", "-f", file).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen -y -f %s: %v: %s", file, err, out)
		}
		f := strings.Fields(string(out))
		return f[0] + " " + f[1]
	}
	authorized, err := os.ReadFile(k.authorized)
	if err != nil {
		t.Fatal(err)
	}
	if u := pub(k.userFile); !strings.HasPrefix(string(authorized), u+" bench@watch") {
		t.Errorf("authorized_keys %q does not name the user's key %q", authorized, u)
	}
	out, err := exec.Command(keygen, "-F", "[127.0.0.1]:40222", "-f", k.knownFile).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen -F: %v: %s", err, out)
	}
	if h := pub(k.hostFile); !strings.Contains(string(out), h) {
		t.Errorf("known_hosts for [127.0.0.1]:40222 is %q, not the host key %q", out, h)
	}
	for _, f := range []string{k.hostFile, k.userFile} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; ssh and vigil serve refuse a key others may read", f, err, st.Mode())
		}
	}
}
