package serve

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/sanitize"
)

// keyFile is an OpenSSH authorized_keys file, read again when it changes
// (a key removed from it is refused from the next connection on).
type keyFile struct {
	path string

	mu    sync.Mutex
	mod   time.Time
	size  int64
	keys  map[string]audit.Who // fingerprint → who
	err   error
	warns []string
}

func loadKeyFile(path string) (*keyFile, error) {
	k := &keyFile{path: path}
	k.refresh()
	return k, k.err
}

// refresh reads the file again if its size or time changed. A file that
// became unreadable or bad keeps the keys last read, and says so.
func (k *keyFile) refresh() {
	fi, err := os.Stat(k.path)
	if err != nil {
		k.err = err
		return
	}
	if k.keys != nil && fi.ModTime().Equal(k.mod) && fi.Size() == k.size {
		return
	}
	b, err := os.ReadFile(k.path)
	if err != nil {
		k.err = err
		return
	}
	keys, warns, err := parseAuthorizedKeys(b)
	if err != nil {
		k.err = fmt.Errorf("%s: %w", k.path, err)
		return
	}
	k.keys, k.warns, k.err, k.mod, k.size = keys, warns, nil, fi.ModTime(), fi.Size()
}

// lookup says whose key this is, if the file has it.
func (k *keyFile) lookup(key gossh.PublicKey) (audit.Who, bool) {
	if k == nil {
		return audit.Who{}, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refresh()
	who, ok := k.keys[gossh.FingerprintSHA256(key)]
	return who, ok
}

func (k *keyFile) count() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}

// parseAuthorizedKeys reads authorized_keys lines. A key's name is its
// comment (sanitized: it is shown on every screen and in the audit log),
// else its fingerprint. Options (from=, command=, …) are not enforced by
// vigil serve: a key that carries them is refused with the line number, so
// nobody believes a restriction holds that does not.
func parseAuthorizedKeys(b []byte) (map[string]audit.Who, []string, error) {
	keys := map[string]audit.Who{}
	var warns []string
	line := 0
	for len(b) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			l, b = b, nil
		}
		l = bytes.TrimSpace(l)
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		pub, comment, opts, _, err := gossh.ParseAuthorizedKey(l)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: not a public key: %v", line, err)
		}
		if len(opts) > 0 {
			return nil, nil, fmt.Errorf("line %d: key options (%s) are not supported by vigil serve; remove them", line, sanitize.Line(opts[0]))
		}
		fp := gossh.FingerprintSHA256(pub)
		name := sanitize.Line(comment)
		if name == "" {
			name = fp
		}
		if _, dup := keys[fp]; dup {
			warns = append(warns, fmt.Sprintf("line %d: key %s listed twice; the first name is kept", line, fp))
			continue
		}
		keys[fp] = audit.Who{Name: name, Fingerprint: fp}
	}
	return keys, warns, nil
}
