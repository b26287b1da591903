package gitstore

import (
	"strings"
	"testing"
)

func FuzzParseLsRemote(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567\trefs/heads/main\n"))
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567\trefs/tags/readproof/runs/a\n\n"))
	f.Add([]byte("zz\trefs/x\n"))
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567 refs/heads/main"))
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, err := parseLsRemote(data)
		if err != nil {
			return
		}
		for _, r := range refs {
			if !isHexOID(string(r.OID)) || CheckRefName(r.Name) != nil {
				t.Fatalf("accepted %q -> %+v", data, r)
			}
		}
	})
}

func FuzzParsePorcelain(f *testing.F) {
	f.Add([]byte("To /srv/x.git\n*\trefs/heads/main:refs/heads/main\t[new branch]\n!\tabc:refs/tags/t\t[rejected] (already exists)\nDone\n"))
	f.Add([]byte("=\trefs/heads/a:refs/heads/a\t[up to date]\n"))
	f.Add([]byte("!\t:\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range parsePorcelain(data) {
			if strings.IndexByte(" *-+=!", s.Flag) < 0 {
				t.Fatalf("flag %q from %q", s.Flag, data)
			}
			if strings.Contains(s.To, "\n") || strings.Contains(s.From, "\n") {
				t.Fatalf("multi-line ref from %q", data)
			}
		}
	})
}

func FuzzParseRevList(f *testing.F) {
	a := strings.Repeat("a", 40)
	b := strings.Repeat("b", 40)
	f.Add([]byte(a + " " + b + "\n" + b + "\n"))
	f.Add([]byte(a + "  " + b))
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := parseRevList(data)
		if err != nil {
			return
		}
		for _, c := range list {
			if !isHexOID(string(c.ID)) {
				t.Fatalf("id %q from %q", c.ID, data)
			}
			for _, p := range c.Parents {
				if !isHexOID(string(p)) {
					t.Fatalf("parent %q from %q", p, data)
				}
			}
		}
	})
}

func FuzzParseRemoteConfig(f *testing.F) {
	f.Add([]byte("remote.origin.url\n/srv/x.git\x00remote.a.b.url\nhttps://h/r\x00"))
	f.Add([]byte("remote..url\nx\x00remote.url\ny\x00"))
	f.Add([]byte("remote.o.url\nfirst\x00remote.o.url\nsecond\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		list := parseRemoteConfig(data)
		seen := map[string]bool{}
		for i, r := range list {
			if r.Name == "" || seen[r.Name] {
				t.Fatalf("name %q (dup %v) from %q", r.Name, seen[r.Name], data)
			}
			seen[r.Name] = true
			if i > 0 && list[i-1].Name > r.Name {
				t.Fatalf("not sorted: %+v", list)
			}
		}
	})
}

func FuzzRedactText(f *testing.F) {
	f.Add("fatal: unable to access", "s3cret")
	f.Add("remote:", "p4ss-w0rd")
	f.Fuzz(func(t *testing.T, prefix, secret string) {
		if len(secret) < 4 || strings.ContainsAny(secret, "/?#@'\":") {
			return
		}
		for _, c := range []byte(secret) {
			if c <= ' ' || c > '~' { // URLs carry no raw spaces or control bytes
				return
			}
		}
		templates := []string{
			prefix + " 'https://u:%s@example.com/x'",
			prefix + " http://%s@h/x",
			prefix + " 'https:/u:%s@example.com/x'",
			prefix + "\nAuthorization: Basic %s",
			prefix + "\nauthorization: token %s trailing",
		}
		for _, tpl := range templates {
			if strings.Contains(tpl+"[REDACTED]", secret) {
				continue
			}
			s := strings.Replace(tpl, "%s", secret, 1)
			if out := RedactText(s); strings.Contains(out, secret) {
				t.Fatalf("RedactText(%q) = %q keeps the secret", s, out)
			}
		}
	})
}

// oldParseLsRemoteHead is parseLsRemoteHead before session 19 (copies and
// splits the output twice): the one-pass version answers the same.
func oldParseLsRemoteHead(out []byte) ([]Ref, string, error) {
	var keep strings.Builder
	head := ""
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: "); ok {
			target, name, _ := strings.Cut(rest, "\t")
			if name == "HEAD" && CheckRefName(target) == nil {
				head = target
			}
			continue
		}
		if _, name, ok := strings.Cut(line, "\t"); ok && (name == "HEAD" || strings.HasSuffix(name, "^{}")) {
			continue
		}
		keep.WriteString(line)
		keep.WriteByte('\n')
	}
	refs, err := parseLsRemote([]byte(keep.String()))
	return refs, head, err
}

func FuzzParseLsRemoteHead(f *testing.F) {
	const id = "0123456789abcdef0123456789abcdef01234567"
	f.Add([]byte("ref: refs/heads/main\tHEAD\n" + id + "\tHEAD\n" + id + "\trefs/heads/main\n" + id + "\trefs/tags/t^{}\n"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(id + "\tHEAD\n"))
	f.Add([]byte("zz\tHEAD\nref: refs/heads/x\tHEAD"))
	f.Add([]byte(id + "\trefs/heads/a\nzz\trefs/x\nref: refs/heads/b\tHEAD\n"))
	f.Add([]byte(id + "\trefs/heads/a\r\n" + id + "\trefs/heads/b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxLsRemoteLine {
			return // a line may be longer than any git writes: refused since session 27, where the old parse took it
		}
		refs, head, err := parseLsRemoteHead(data)
		wantRefs, wantHead, wantErr := oldParseLsRemoteHead(data)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%q: error %v, want %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if head != wantHead || (refs == nil) != (wantRefs == nil) || len(refs) != len(wantRefs) {
			t.Fatalf("%q: %v %q, want %v %q", data, refs, head, wantRefs, wantHead)
		}
		for i := range refs {
			if refs[i] != wantRefs[i] {
				t.Fatalf("%q: ref %d %v, want %v", data, i, refs[i], wantRefs[i])
			}
		}
	})
}
