package serve

import (
	"fmt"
	"net"
	"strings"
)

// keyOptions is what an authorized_keys line's options ask of its key, as
// far as vigil serve enforces them. A line with an option it does not
// enforce grants nothing (optionsOf says which): a restriction silently
// dropped would grant more than the file says.
type keyOptions struct {
	from []string // from="…" patterns (nil: any address)
}

// optionsOf reads an authorized_keys line's options, as
// golang.org/x/crypto/ssh's ParseAuthorizedKey splits them (name or
// name="value", the quotes kept). docs/serve.md lists what each does here.
func optionsOf(opts []string) (keyOptions, error) {
	var ko keyOptions
	pty, restricted := false, false
	for _, o := range opts {
		name, value, hasValue := strings.Cut(o, "=")
		switch strings.ToLower(name) {
		case "from":
			if !hasValue {
				return ko, fmt.Errorf("from= without patterns")
			}
			pats := strings.Split(unquoteOption(value), ",")
			if err := checkFrom(pats); err != nil {
				return ko, err
			}
			ko.from = append(ko.from, strings.Join(pats, ","))
		case "no-port-forwarding", "no-agent-forwarding", "no-x11-forwarding", "no-user-rc", "permitopen", "permitlisten":
			// Restrictions of what vigil serve never offers: they hold.
		case "restrict":
			restricted = true // also no terminal, unless "pty" follows
		case "pty":
			pty = true
		case "no-pty":
			return ko, fmt.Errorf("no-pty: the explorer needs a terminal, so this key could never open it")
		default:
			// command=, environment=, expiry-time=, principals=,
			// cert-authority, tunnel=, verify-required, no-touch-required
			// and anything newer: not enforced here.
			return ko, fmt.Errorf("option %s is not enforced by vigil serve", name)
		}
	}
	if restricted && !pty {
		return ko, fmt.Errorf("restrict without pty: the explorer needs a terminal, so this key could never open it")
	}
	return ko, nil
}

// unquoteOption is an option's value without its quotes (OpenSSH allows a
// quote inside as \").
func unquoteOption(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return strings.ReplaceAll(v, `\"`, `"`)
}

// checkFrom refuses a pattern list OpenSSH would refuse: an empty entry,
// or a CIDR network with bits set past its mask (addrmatch.c
// addr_match_list returns -2 for both, and the key is then not accepted).
func checkFrom(pats []string) error {
	for _, p := range pats {
		p = strings.TrimPrefix(p, "!")
		if p == "" {
			return fmt.Errorf("from=: an empty pattern")
		}
		if _, _, err := cidrOf(p); err != nil {
			return err
		}
	}
	return nil
}

// cidrOf is a pattern as an address or a network (ok false: it is a
// wildcard pattern instead).
func cidrOf(p string) (*net.IPNet, bool, error) {
	if !strings.Contains(p, "/") {
		ip := net.ParseIP(p)
		if ip == nil {
			return nil, false, nil
		}
		bits := 8 * len(ip.To16())
		if ip.To4() != nil {
			ip, bits = ip.To4(), 32
		}
		return &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}, true, nil
	}
	ip, n, err := net.ParseCIDR(p)
	if err != nil {
		return nil, false, nil // as addr_match_list: not a network, so a wildcard pattern
	}
	if !ip.Equal(n.IP) {
		return nil, false, fmt.Errorf("from=: %s has bits set past its mask (OpenSSH refuses it too)", p)
	}
	return n, true, nil
}

// fromAllows says whether a client at ip may use a key with these from=
// patterns. Hostnames are not resolved (as sshd with UseDNS no, its
// default): a pattern is matched against the address, as a network when it
// is one, else as a wildcard pattern (* and ?) against the address's text.
// Any negated match refuses, else any match allows, else it is refused
// (match.c match_host_and_ip with the host being the address;
// addrmatch.c addr_match_list; match.c match_pattern_list).
func fromAllows(patterns []string, ip net.IP) bool {
	for _, list := range patterns {
		if !fromListAllows(list, ip) {
			return false
		}
	}
	return true
}

func fromListAllows(list string, ip net.IP) bool {
	if ip == nil {
		return false
	}
	text := strings.ToLower(ip.String())
	matched := false
	for _, p := range strings.Split(list, ",") {
		neg := strings.HasPrefix(p, "!")
		p = strings.ToLower(strings.TrimPrefix(p, "!"))
		n, isNet, err := cidrOf(p)
		hit := false
		switch {
		case err != nil:
			return false
		case isNet:
			hit = n.Contains(ip)
		default:
			hit = wildcard(p, text)
		}
		if hit && neg {
			return false
		}
		matched = matched || hit
	}
	return matched
}

// wildcard matches s against p, where * is any run of characters and ?
// any one (match.c match_pattern; no character classes).
func wildcard(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if wildcard(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	return s == ""
}
