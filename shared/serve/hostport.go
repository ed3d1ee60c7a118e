package serve

import (
	"errors"
	"net/netip"
	"strings"
)

// parseHostPort parses a Host header value strictly: a host name, an IPv4
// address or a bracketed IPv6 address, then optionally ":" and a decimal
// port from 1 to 65535 without leading zeros. It returns the host in lower
// case without brackets. Everything else is refused, so that what the guard
// compares is exactly the host the request names: "127.0.0.1:8080.evil.com"
// is not "127.0.0.1" with port "8080.evil.com".
func parseHostPort(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty")
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", errors.New("unclosed [")
		}
		host = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return "", errors.New("junk after ]")
			}
			port = rest[1:]
			if err := checkPort(port); err != nil {
				return "", err
			}
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", errors.New("not an IPv6 address in brackets")
		}
		return strings.ToLower(host), nil
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
		if err := checkPort(port); err != nil {
			return "", err
		}
	}
	if err := checkName(host); err != nil {
		return "", err
	}
	return strings.ToLower(host), nil
}

// checkPort accepts 1-65535 written in ASCII digits without a leading zero.
func checkPort(p string) error {
	if p == "" || len(p) > 5 || p[0] == '0' {
		return errors.New("bad port")
	}
	n := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return errors.New("bad port")
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return errors.New("bad port")
	}
	return nil
}

// checkName accepts a DNS name (ASCII letters, digits, hyphens; labels of
// 1-63 characters, no trailing dot) or a dotted IPv4 address.
func checkName(h string) error {
	if h == "" || len(h) > 253 {
		return errors.New("bad host")
	}
	for rest, more := h, true; more; { // the labels, as strings.Split gives them, without allocating
		var label string
		label, rest, more = strings.Cut(rest, ".")
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("bad host")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return errors.New("bad host")
			}
		}
	}
	return nil
}

// parseOrigin parses an Origin header strictly as scheme "://" host
// [":" port] with scheme http or https and the host rules of
// parseHostPort; "null", paths, userinfo, queries and fragments are
// refused. It returns the host.
func parseOrigin(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "http://"); !ok {
			return "", errors.New("not an http(s) origin")
		}
	}
	return parseHostPort(rest)
}
