package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/sanitize"
)

// keyFile is an OpenSSH authorized_keys file, read again when it changes
// (a key removed from it is refused from the next connection on). A file
// that cannot be read or parsed grants nothing until it can (fail closed:
// keeping the keys last read would let a removed key in); trouble says
// why, for the log and every session's status bar.
type keyFile struct {
	path string
	flag string // --approvers or --authorized-keys, as the log names it
	// changed is told each time the file's trouble or its refused keys
	// change ("" and none: it is read whole).
	changed func(trouble string, refused []string)

	mu      sync.Mutex
	mod     time.Time
	size    int64
	read    bool
	keys    map[string][]keyEntry // fingerprint → its lines that grant
	trouble string                // the whole line, for the log
	short   string                // the flag and why, for a status bar
	refused []string
}

// keyEntry is one line that grants a key.
type keyEntry struct {
	who  audit.Who
	opts keyOptions
}

func loadKeyFile(path, flag string, changed func(string, []string)) (*keyFile, error) {
	k := &keyFile{path: path, flag: flag}
	k.refresh()
	if k.trouble != "" {
		return nil, fmt.Errorf("%s", k.trouble)
	}
	k.changed = changed
	if len(k.refused) > 0 && changed != nil {
		changed("", k.refused)
	}
	return k, nil
}

// refresh reads the file again if its size or time changed.
func (k *keyFile) refresh() {
	trouble, refused := k.trouble, k.refused
	k.reread()
	if k.changed != nil && (k.trouble != trouble || fmt.Sprint(k.refused) != fmt.Sprint(refused)) {
		k.changed(k.trouble, k.refused)
	}
}

func (k *keyFile) reread() {
	fail := func(err error) {
		k.keys, k.refused, k.read = nil, nil, false
		k.trouble = fmt.Sprintf("%s %s: %s; it grants nothing until it is fixed", k.flag, k.path, sanitize.Line(err.Error()))
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is long, and the server's to know
		}
		k.short = fmt.Sprintf("%s %s: grants nothing", k.flag, sanitize.Line(err.Error()))
	}
	fi, err := os.Stat(k.path)
	if err != nil {
		fail(err)
		return
	}
	if k.read && fi.ModTime().Equal(k.mod) && fi.Size() == k.size {
		return
	}
	b, err := os.ReadFile(k.path)
	if err != nil {
		fail(err)
		return
	}
	keys, refused, err := parseAuthorizedKeys(b)
	if err != nil {
		fail(err)
		return
	}
	k.keys, k.refused, k.trouble, k.short, k.mod, k.size, k.read = keys, refused, "", "", fi.ModTime(), fi.Size(), true
}

// lookup says whose key this is and whether a client at ip may use it.
func (k *keyFile) lookup(fp string, ip net.IP) (audit.Who, bool) {
	if k == nil {
		return audit.Who{}, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refresh()
	for _, e := range k.keys[fp] {
		// As sshd, a line whose from= refuses the address does not end
		// the search: another line of the same key may allow it.
		if fromAllows(e.opts.from, ip) {
			return e.who, true
		}
	}
	return audit.Who{}, false
}

// state is the file's trouble ("" when it is read whole), read again if
// it changed.
func (k *keyFile) state() string {
	if k == nil {
		return ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refresh()
	return k.trouble
}

func (k *keyFile) count() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}

// parseAuthorizedKeys reads authorized_keys lines with x/crypto/ssh's
// parser (options included). A key's name is its comment (sanitized and
// cut short: it is shown on every screen and in the logs), else its
// fingerprint. A line that is not a key makes the whole file an error; a
// key whose options vigil serve does not enforce grants nothing, and is
// named in refused with its line and why.
func parseAuthorizedKeys(b []byte) (map[string][]keyEntry, []string, error) {
	keys := map[string][]keyEntry{}
	var refused []string
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
		fp := gossh.FingerprintSHA256(pub)
		ko, err := optionsOf(opts)
		if err != nil {
			refused = append(refused, fmt.Sprintf("line %d (%s): %s", line, fp, sanitize.Line(err.Error())))
			continue
		}
		name := keyName(comment)
		if name == "" {
			name = fp
		}
		keys[fp] = append(keys[fp], keyEntry{who: audit.Who{Name: name, Fingerprint: fp}, opts: ko})
	}
	return keys, refused, nil
}

// maxKeyName is the longest key name shown or logged: a comment is the
// key owner's to write, and one of thousands of characters would fill
// every log line and status bar it is in.
const maxKeyName = 64

func keyName(comment string) string {
	name := []rune(sanitize.Line(comment))
	if len(name) > maxKeyName {
		return string(name[:maxKeyName-1]) + "…"
	}
	return string(name)
}
