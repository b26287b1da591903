package gitstore

import (
	"strings"
	"testing"
)

// FuzzRemoteConfigReaders: the two in-process readers of configuration
// (git config output, and the store's config file) never panic; a settled
// remote has a fetch URL and at least one push URL; a file said to set the
// remote's url holds a url line, and the url returned is in it; a key that
// leaves a listing to git is never read as settling it; a remote config
// file plainServingConfig accepts holds no quote, backslash or CR and no
// section that changes what upload-pack advertises.
func FuzzRemoteConfigReaders(f *testing.F) {
	f.Add([]byte("local\x00remote.o.url\n/srv/a.git\x00global\x00url.b:.insteadof\na:\x00"), "o")
	f.Add([]byte("command\x00url.x.pushinsteadof\ny\x00local\x00remote.o.pushurl\np\x00local\x00remote.o.url\nx:r\x00"), "o")
	f.Add([]byte("[remote \"o\"]\n\turl = /srv/a.git ; c\n[url \"b\"]\n\tinsteadOf = a\n"), "o")
	f.Add([]byte("local\x00remote.o.url\n/srv/a.git\x00global\x00transfer.hiderefs\nrefs/x\x00"), "o")
	f.Add([]byte("[core]\n\tbare = true\n[Transfer]\n\thideRefs = refs/x\n"), "o")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		if CheckRemoteName(name) != nil {
			return
		}
		r, answer := parseRemoteURLs(data, name)
		if answer == urlsKnown {
			if len(r.urls) == 0 || len(r.pushTo()) == 0 {
				t.Fatalf("settled without URLs: %+v", r)
			}
			_ = r.fetchURL()
			_ = r.lastURL()
		}
		if _, ok := simpleConfigURL(data, name); ok && !strings.Contains(strings.ToLower(string(data)), "url") {
			t.Fatal("a url found in a file without one")
		}
		if u, ok := simpleConfigURL(data, name); ok && (u == "" || !strings.Contains(string(data), u)) {
			t.Fatalf("url %q is not in the file", u)
		}
		if answer == urlsKnown && !r.gitLists {
			fields := strings.Split(string(data), "\x00")
			for i := 1; i < len(fields); i += 2 {
				if key, _, _ := strings.Cut(fields[i], "\n"); listingKey(key) {
					t.Fatalf("%q read as settling the listing", key)
				}
			}
		}
		if plainServingConfig(data) {
			lower := strings.ToLower(string(data))
			if strings.ContainsAny(lower, "\"\\\r") {
				t.Fatal("a quote, backslash or CR accepted")
			}
			for _, line := range strings.Split(lower, "\n") {
				line = strings.TrimLeft(line, " \t")
				for _, sec := range []string{"[include", "[extensions", "[uploadpack", "[transfer"} {
					if strings.HasPrefix(line, sec) {
						t.Fatalf("section %s accepted", sec)
					}
				}
			}
		}
	})
}
