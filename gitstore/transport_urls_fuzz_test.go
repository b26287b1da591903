package gitstore

import (
	"strings"
	"testing"
)

// FuzzRemoteConfigReaders: the two in-process readers of configuration
// (git config output, and the store's config file) never panic; a settled
// remote has a fetch URL and at least one push URL; a file said to set the
// remote's url holds a url line.
func FuzzRemoteConfigReaders(f *testing.F) {
	f.Add([]byte("local\x00remote.o.url\n/srv/a.git\x00global\x00url.b:.insteadof\na:\x00"), "o")
	f.Add([]byte("command\x00url.x.pushinsteadof\ny\x00local\x00remote.o.pushurl\np\x00local\x00remote.o.url\nx:r\x00"), "o")
	f.Add([]byte("[remote \"o\"]\n\turl = /srv/a.git ; c\n[url \"b\"]\n\tinsteadOf = a\n"), "o")
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
		if simpleConfigHasURL(data, name) && !strings.Contains(strings.ToLower(string(data)), "url") {
			t.Fatal("a url found in a file without one")
		}
	})
}
