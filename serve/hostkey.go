package serve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// HostKeyName is the host key's file name in the state directory.
const HostKeyName = "ssh_host_ed25519_key"

// loadHostKey reads the server's host key at path, generating an Ed25519
// one (mode 0600, its directory 0700) when nothing is there. Like sshd, it
// refuses a key that others may read.
func loadHostKey(path string) (gossh.Signer, []byte, bool, error) {
	fi, err := os.Stat(path)
	created := false
	if errors.Is(err, os.ErrNotExist) {
		if err := generateHostKey(path); err != nil {
			return nil, nil, false, err
		}
		created = true
		fi, err = os.Stat(path)
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("host key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, false, fmt.Errorf("host key %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, nil, false, fmt.Errorf("host key %s is readable by others (mode %04o): chmod 600 it", path, perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, false, fmt.Errorf("host key: %w", err)
	}
	signer, err := gossh.ParsePrivateKey(b)
	if err != nil {
		return nil, nil, false, fmt.Errorf("host key %s: %v", path, err)
	}
	return signer, b, created, nil
}

func generateHostKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("host key: %w", err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := gossh.MarshalPrivateKey(priv, "vigil serve host key")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("host key: %w", err)
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("host key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("host key: %w", err)
	}
	return f.Close()
}
