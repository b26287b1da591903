package policy

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/readproof/readproof/identity"
)

// The parse cache (docs/store-format.md, "The policy cache"): a large
// policy file's resources as the full parse made them, kept in a file of
// the store and used only for the very bytes they were parsed from.
//
// A resource is a function of the file's bytes alone: its checks read the
// block itself and the file's [defaults] and [sources].env, never the
// environment or the file system. The settings are not (a root's symlinks
// are resolved, "~" is the user's home, relative paths hang off the file's
// directory), so they are never cached: every load parses them again, from
// the file's text with the resource blocks left out, and a settings error
// sends the load to the full parse, which gives it as it always did. A
// cached load therefore returns the File the full parse returns, and gives
// an error exactly when it would (FuzzCacheMatchesParse).
//
// The cache is trusted only as far as its MAC: HMAC-SHA256 under a
// secret of the user's (Cache.Key), kept outside the store. Whoever can
// write the store but not readproof.toml (a restored CI cache, a shared
// disk) cannot make a cache the user's commands accept, so they cannot
// point a resource elsewhere than the reviewed file says.

// CacheFile is the parse cache's name at the top of the store: each
// policy file's cache is CacheFile-<16 hex digits> there (Cache.Dir), and
// a cache of format 3 or before was CacheFile itself.
const CacheFile = "readproof-policy-cache"

// cacheFormat is the cache's first line.
const cacheFormat = "readproof-policy-cache/4"

// CacheMaxFiles and CacheMaxBytes bound the caches in a store's directory
// (Cache.Dir): after a cache is written, the others are removed, the
// least recently used first (a write or a use: markUsed), until there
// are at most CacheMaxFiles in all and their sizes add up to at most
// CacheMaxBytes. The cache just written is
// always kept. A 10,000-resource policy's cache is about 0.5 MB.
const (
	CacheMaxFiles = 8
	CacheMaxBytes = 64 << 20
)

// cacheMaxResources is the most bytes a cache's resources and index may
// take: where each resource starts is kept as an int32 (lazyResources.at).
// A policy whose resources take more (a policy file of hundreds of MB) is
// not cached: every load parses it, without a word.
const cacheMaxResources = math.MaxInt32

// CacheMinBytes is the size from which a policy file is cached: below it
// the parse (about a millisecond a 100 KB) costs less than a file's open.
const CacheMinBytes = 64 << 10

// Cache names the parse cache for LoadCached.
type Cache struct {
	// Dir, when set, is the directory of the caches (the store's): the
	// cache of the policy file at path is Dir/CacheFile-<slot>, the slot
	// the first 16 hex digits of the SHA-256 of path made absolute
	// (cacheSlot), so that policy files used in turn with one store keep
	// a cache each; they are bounded by CacheMaxFiles and CacheMaxBytes.
	// Path is then not used.
	Dir string
	// Path, when Dir is not set, is the one cache file, whatever the
	// policy file (tests).
	Path string
	// Build identifies the program that parses: a cache written by another
	// build, whose checks may differ, is not used.
	Build string
	// Ours, when set, is asked once, before the cache is first read or
	// written, whether Path's directory is where the cache may be (a store
	// of readproof's); false leaves the cache alone.
	Ours func() bool
	// Key returns the secret the cache is authenticated under (its
	// HMAC-SHA256 key), or nil when there is none; it may make the key.
	// It is called at most once a load, after Ours and only for a file
	// that would be cached, and only when there is a cache to read at
	// Path or a cache could be written there (its temporary file was
	// made): a store that cannot take a cache (read-only, full) makes no
	// key. Without a key (Key nil, or returning nil) the cache is neither
	// read nor written.
	Key func() []byte

	// settledAt, when set (by a test), replaces settledAt: the time
	// before which a policy file's last change must be for the cache to
	// trust its stat line.
	settledAt func(tmp os.FileInfo) time.Time
	// fsType, when set (by a test), replaces fsType: the type of the
	// file system the policy file is on.
	fsType func(file *os.File, path string) (uint32, bool)
	// now, when set (by a test), replaces time.Now as markUsed's clock.
	now func() time.Time
	// maxFiles, maxBytes and maxResources, when set (by a test), replace
	// CacheMaxFiles, CacheMaxBytes and cacheMaxResources.
	maxFiles, maxBytes, maxResources int
}

// cacheSlot is the name of the cache of the policy file at path in a
// cache directory: CacheFile-<the first 16 hex digits of fileID(path)>;
// ok is false when path cannot be made absolute.
func cacheSlot(path string) (slot string, ok bool) {
	id, ok := fileID(path)
	if !ok {
		return "", false
	}
	return CacheFile + "-" + hex.EncodeToString(id[:8]), true
}

// fileID identifies the policy file at path for its cache (the file line):
// the SHA-256 of path made absolute and cleaned. Its device and inode are
// the stat line's.
func fileID(path string) (id [32]byte, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return id, false
	}
	return sha256.Sum256([]byte(abs)), true
}

// isCacheSlot reports whether name is a cache's name in a cache
// directory, as cacheSlot makes them.
func isCacheSlot(name string) bool {
	h, ok := strings.CutPrefix(name, CacheFile+"-")
	if !ok || len(h) != 16 {
		return false
	}
	for _, c := range []byte(h) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// file is the cache file of the policy file at path: Path, or its slot in
// Dir; "" when there is none.
func (c Cache) file(path string) string {
	if c.Dir == "" {
		return c.Path
	}
	slot, ok := cacheSlot(path)
	if !ok {
		return ""
	}
	return filepath.Join(c.Dir, slot)
}

func (c Cache) limits() (files, bytes, resources int) {
	files, bytes, resources = CacheMaxFiles, CacheMaxBytes, cacheMaxResources
	if c.maxFiles > 0 {
		files = c.maxFiles
	}
	if c.maxBytes > 0 {
		bytes = c.maxBytes
	}
	if c.maxResources > 0 {
		resources = c.maxResources
	}
	return files, bytes, resources
}

// ctimeKept reports whether the policy file, open as file (at path when
// file is nil), is on a file system whose change times the kernel keeps
// (keepsCtime): only there does its stat line bind its bytes.
func (c Cache) ctimeKept(file *os.File, path string) bool {
	get := c.fsType
	if get == nil {
		get = fsType
	}
	t, ok := get(file, path)
	return ok && keepsCtime(t)
}

// stampSettle is how long before the cache is written a policy file must
// have last changed for the cache to record its stat line: longer than
// the coarsest time stamps a file system keeps (2 s on FAT), so that any
// later change gets another change time (docs/store-format.md, "The
// policy cache").
const stampSettle = 3 * time.Second

// settled reports whether a policy file last changed at ctime may be
// known by its stat line from a cache written now to tmp: ctime is
// stampSettle before the earlier of the clock's time and tmp's
// modification time (the file system's clock, which set ctime too).
func (c Cache) settled(ctime time.Time, tmp os.FileInfo) bool {
	var at time.Time
	if c.settledAt != nil {
		at = c.settledAt(tmp)
	} else {
		at = time.Now()
		if tmp != nil && tmp.ModTime().Before(at) {
			at = tmp.ModTime()
		}
	}
	return ctime.Before(at.Add(-stampSettle))
}

// LoadCached is Load through the parse cache c: a file of CacheMinBytes or
// more whose bytes the cache was written from is read from it, its
// settings parsed again; any other file is parsed in full and, when
// accepted, cached. A cache that is missing, torn, damaged, written by
// another build or for other bytes, or whose MAC does not check under the
// key, is parsed past and replaced; writing it is best effort and never an
// error.
func LoadCached(path string, c Cache) (*File, error) {
	f, _, err := loadCached(path, c, CacheMinBytes)
	return f, err
}

// loadCached is LoadCached for files of minBytes or more; hit says
// whether the cache was used.
func loadCached(path string, c Cache, minBytes int) (f *File, hit bool, err error) {
	// opened once (Open), read through this descriptor to the end
	file, fi, err := Open(path)
	if err != nil {
		return nil, false, readError(err)
	}
	defer file.Close()
	return loadCachedFrom(path, file, fi, c, minBytes)
}

// LoadCachedFrom is LoadCached of the policy file at path already opened
// by Open as file, with fi its FileInfo, and not read from: a command that
// judged the file at its open reads the file it judged, and opens it once.
// file is left open, for the caller to close (or to read again, as
// AppendOptions.Opened).
func LoadCachedFrom(path string, file *os.File, fi fs.FileInfo, c Cache) (*File, error) {
	f, _, err := loadCachedFrom(path, file, fi, c, CacheMinBytes)
	return f, err
}

// loadCachedFrom is loadCached of file, opened at path by Open and not
// read from.
func loadCachedFrom(path string, file *os.File, fi fs.FileInfo, c Cache, minBytes int) (f *File, hit bool, err error) {
	parse := func() (*File, bool, error) {
		text, err := readFrom(path, file, fi)
		if err != nil {
			return nil, false, readError(err)
		}
		f, err := parseText(path, text)
		return f, false, err
	}
	var cachePath string
	if fi.Mode().IsRegular() && fi.Size() >= int64(minBytes) {
		cachePath = c.file(path)
	}
	if cachePath == "" || c.Key == nil || c.Ours != nil && !c.Ours() {
		return parse()
	}
	c.Path = cachePath
	name := path
	if name == "" {
		name = DefaultFileName
	}
	build := buildSum(c.Build)
	var key []byte
	if _, err := os.Lstat(c.Path); err == nil {
		if key = c.Key(); len(key) == 0 {
			return parse()
		}
		if f, restamp, written := readCache(c, file, path, name, fi.Size(), build, key); f != nil {
			if restamp != nil {
				c.writeCache(restamp)
			}
			c.markUsed(written)
			return f, true, nil
		}
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, false, readError(err)
	}
	text, err := readFrom(path, file, fi)
	if err != nil {
		return nil, false, readError(err)
	}
	var heads []headRun
	f, ok := parseFastHeads(path, name, text, &heads)
	if !ok {
		f, err := parseRest(path, name, text)
		return f, false, err
	}
	// the stat line of the bytes read: the file's, the same before the
	// read and after it
	stamp, ctime, stamped := fileStamp(fi)
	if stamped = stamped && c.ctimeKept(nil, path); stamped {
		after, err := os.Stat(path)
		stamped = err == nil && after.Size() == int64(len(text))
		if stamped {
			again, _, _ := fileStamp(after)
			stamped = again == stamp
		}
	}
	c.writeCache(func(tmp os.FileInfo) []byte {
		if key == nil {
			key = c.Key()
		}
		if len(key) == 0 {
			return nil
		}
		if !stamped || !c.settled(ctime, tmp) {
			stamp = noStamp
		}
		b := encodeCache(path, name, f, text, heads, sumText(text), stamp, build, key)
		if _, _, maxRes := c.limits(); resourcesLen(b) > maxRes {
			return nil // its resources' offsets would not fit an int32
		}
		return b
	})
	return f, false, nil
}

// buildSum is the cache's build line for the build named build: the
// SHA-256 of that name and of the lists whose places appendResource
// writes a source type and a strategy as. A build's name is its binary's
// path, size and time, which another build can have (a package installed
// over another with the times it was built with); its codes are bound to
// the names they stand for all the same.
func buildSum(build string) [32]byte {
	h := sha256.New()
	h.Write([]byte(build))
	for _, t := range SourceTypes {
		h.Write([]byte("\x00" + t))
	}
	h.Write([]byte("\x01"))
	for _, st := range Strategies {
		h.Write([]byte("\x00" + string(st)))
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// sumText is the SHA-256 of text, hashed a piece at a time (a []byte of
// the whole would be another copy of the file).
func sumText(text string) [32]byte {
	h := sha256.New()
	for i := 0; i < len(text); i += 64 << 10 {
		h.Write([]byte(text[i:min(i+64<<10, len(text))]))
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// settingsSpans are the byte ranges of text that hold no resource block:
// the root's keys before the first header and each run of other headers'
// tables (heads as parseFastHeads recorded them).
func settingsSpans(text string, heads []headRun) [][2]int {
	if len(heads) == 0 {
		return [][2]int{{0, len(text)}}
	}
	spans := [][2]int{{0, heads[0].at}}
	for i, h := range heads {
		if h.resource {
			continue
		}
		end := len(text)
		if i+1 < len(heads) {
			end = heads[i+1].at
		}
		spans = append(spans, [2]int{h.at, end})
	}
	return spans
}

// joinSpans is the text of spans of data, in order.
func joinSpans(data []byte, spans [][2]int) string {
	n := 0
	for _, s := range spans {
		n += s[1] - s[0]
	}
	b := make([]byte, 0, n)
	for _, s := range spans {
		b = append(b, data[s[0]:s[1]]...)
	}
	return string(b)
}

// sameSettings reports whether f and g agree on everything but their
// resources.
func sameSettings(f, g *File) bool {
	a, b := *f, *g
	a.res, a.byURI, a.lazy, b.res, b.byURI, b.lazy = nil, nil, nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}

// encodeCache is the cache of f, parsed in full from text (heads recorded
// as it was read), or nil when f is not one the cache can hold: its
// settings, parsed from text without the resource blocks, must come out
// as f's, with no resource (a root key `resource = [...]` declares them
// outside any block), authenticated under key. The cache is
//
//	readproof-policy-cache/4
//	build <buildSum of the build's name>
//	policy <sha256 of the file> <size>
//	file <fileID of its path>
//	stat <device> <inode> <mtime ns> <ctime ns>   or  stat -
//	settings <n>
//	<start> <end>                 n lines: the byte ranges of the settings
//	resources <n>
//	<the n resources, binary (appendResource)>
//	<Lookup's index: n uvarints, the resources in URI order>
//	mac <HMAC-SHA256 of everything above under key, 64 hex digits>
//
// The MAC finds a planted or edited cache, and a torn write too (a rename
// that outlived a crash when the data did not): it replaced the CRC-32C of
// format 1, which a second pass over the cache would only repeat. The
// policy file's own bytes are matched by SHA-256, or, when the stat line
// was recorded and the file's stat is still that one, by the stat alone
// (readSettings; format 3). The file line names the path the cache is for
// (format 4: a directory keeps one cache per policy file, Cache.Dir).
func encodeCache(path, name string, f *File, text string, heads []headRun, sum [32]byte, stamp string, build [32]byte, key []byte) []byte {
	id, ok := fileID(path)
	if len(f.res) == 0 || !ok {
		return nil
	}
	spans := settingsSpans(text, heads)
	g, ok := parseFast(path, name, joinSpans([]byte(text), spans))
	if !ok || len(g.res) != 0 || !sameSettings(f, g) {
		return nil
	}
	b := make([]byte, 0, len(text)+64*len(f.res)/8+256)
	b = append(b, cacheFormat+"\nbuild "...)
	b = hex.AppendEncode(b, build[:])
	b = append(b, "\npolicy "...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(text)), 10)
	b = append(b, "\nfile "...)
	b = hex.AppendEncode(b, id[:])
	b = append(b, "\nstat "...)
	b = append(b, stamp...)
	b = append(b, "\nsettings "...)
	b = strconv.AppendInt(b, int64(len(spans)), 10)
	b = append(b, '\n')
	for _, s := range spans {
		b = strconv.AppendInt(b, int64(s[0]), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(s[1]), 10)
		b = append(b, '\n')
	}
	b = append(b, "resources "...)
	b = strconv.AppendInt(b, int64(len(f.res)), 10)
	b = append(b, '\n')
	for i := range f.res {
		b = appendResource(b, &f.res[i])
	}
	for _, i := range f.byURI {
		b = binary.AppendUvarint(b, uint64(i))
	}
	return appendMAC(b, key)
}

// resourcesLen is the length of the resources and the index in cache b
// (encodeCache's), 0 for nil: where each resource starts is an offset
// into them.
func resourcesLen(b []byte) int {
	if b == nil {
		return 0
	}
	// the first "\nresources " is the line's: the lines before it are
	// digits and hex; read in place (b may be some GiB)
	i := bytes.Index(b, []byte("\nresources "))
	j := bytes.IndexByte(b[i+1:], '\n')
	return len(b) - macLine - (i + 1 + j + 1)
}

// appendMAC appends the mac line of b under key.
func appendMAC(b, key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(b)
	b = append(b, "mac "...)
	b = hex.AppendEncode(b, m.Sum(nil))
	return append(b, '\n')
}

// macLine is the length of the cache's last line.
const macLine = len("mac \n") + 2*sha256.Size

// readCache returns the File of the policy file at path, open as file
// (size bytes at its stat), from the cache file at cache, or nil when the cache does not
// hold it: missing, not a regular file, torn, damaged, of
// another format or build, of other bytes (the file's SHA-256 and size, as
// read now), when its MAC does not check under key, or when the settings
// no longer parse (the full parse then words the error).
//
// restamp, when not nil, is the cache again with the stat line of the file
// as read now, for writeCache: the file was hashed (its stat was not the
// one recorded), and the new stat is recorded once it has settled. used
// is the cache file's modification time, for markUsed.
func readCache(c Cache, file *os.File, path, name string, size int64, build [32]byte, key []byte) (f *File, restamp func(os.FileInfo) []byte, used time.Time) {
	raw, used, ok := readCacheFile(c.Path, 4*size+64<<10, key)
	if !ok {
		return nil, nil, used
	}
	f, restamp = readCacheText(c, file, path, name, size, build, key, raw)
	return f, restamp, used
}

// readCacheText is readCache of the cache's text raw, read and
// authenticated.
func readCacheText(c Cache, file *os.File, path, name string, size int64, build [32]byte, key []byte, raw string) (f *File, restamp func(os.FileInfo) []byte) {
	rest, ok := strings.CutPrefix(raw, cacheFormat+"\nbuild "+hex.EncodeToString(build[:])+"\npolicy ")
	if !ok || len(rest) < 2*sha256.Size+1 || rest[2*sha256.Size] != ' ' {
		return nil, nil
	}
	var sum [32]byte
	if _, err := hex.Decode(sum[:], []byte(rest[:2*sha256.Size])); err != nil {
		return nil, nil
	}
	psize, rest, ok := cacheInt(rest[2*sha256.Size+1:], '\n')
	if !ok || int64(psize) != size {
		// another file's cache, and the bound of the settings' count
		return nil, nil
	}
	// the cache of this path: not another file's of the same bytes
	id, ok := fileID(path)
	if !ok {
		return nil, nil
	}
	if rest, ok = strings.CutPrefix(rest, "file "+hex.EncodeToString(id[:])+"\n"); !ok {
		return nil, nil
	}
	statAt := len(raw) - len(rest)
	if rest, ok = strings.CutPrefix(rest, "stat "); !ok {
		return nil, nil
	}
	end := strings.IndexByte(rest, '\n')
	if end < 1 || end > 100 {
		return nil, nil
	}
	stamp := rest[:end]
	rest = rest[end+1:]
	statEnd := len(raw) - len(rest)
	if rest, ok = strings.CutPrefix(rest, "settings "); !ok {
		return nil, nil
	}
	n, rest, ok := cacheInt(rest, '\n')
	if !ok || n < 1 || n > psize+1 {
		return nil, nil
	}
	spans := make([][2]int, n)
	last := 0
	for i := range spans {
		var a, b int
		if a, rest, ok = cacheInt(rest, ' '); !ok {
			return nil, nil
		}
		if b, rest, ok = cacheInt(rest, '\n'); !ok || a < last || b < a || b > psize {
			return nil, nil
		}
		spans[i], last = [2]int{a, b}, b
	}
	if rest, ok = strings.CutPrefix(rest, "resources "); !ok {
		return nil, nil
	}
	if n, rest, ok = cacheInt(rest, '\n'); !ok || n < 1 || n > len(rest) {
		return nil, nil
	}
	if _, _, maxRes := c.limits(); len(rest) > maxRes {
		return nil, nil // offsets into rest are int32s
	}
	settings, now, ctime, ok := readSettings(c, file, path, psize, sum, spans, stamp)
	if !ok {
		return nil, nil
	}
	f, ok = parseFast(path, name, settings)
	if !ok || len(f.res) != 0 {
		return nil, nil
	}
	// Every resource is read once, as Resources would decode it, into one
	// scratch Resource (no slice of 10,000 is made: its pages are most of
	// a decode's cost), and where each starts is kept: Lookup decodes one,
	// Resources all, and neither can meet what this pass did not accept.
	cr := cacheReader{s: rest}
	at := make([]int32, n)
	var scratch Resource
	for i := range at {
		at[i] = int32(cr.i)
		cr.resource(&scratch)
	}
	if cr.bad {
		return nil, nil
	}
	// Lookup's index, checked: each resource once, in increasing order.
	lz := &lazyResources{s: rest, at: at, byURI: make([]int32, n)}
	seen := make([]bool, n)
	var prev identity.URI
	for k := range lz.byURI {
		i := cr.uint()
		if cr.bad || i >= uint64(n) || seen[i] {
			return nil, nil
		}
		lz.byURI[k], seen[i] = int32(i), true
		u := lz.uri(int32(i))
		if k > 0 && uriCompare(&prev, &u) >= 0 {
			return nil, nil
		}
		prev = u
	}
	if cr.i != len(cr.s) {
		return nil, nil
	}
	f.lazy = lz
	if now != "" && now != stamp {
		restamp = func(tmp os.FileInfo) []byte {
			if !c.settled(ctime, tmp) {
				return nil
			}
			b := make([]byte, 0, len(raw)+len(now)-len(stamp)+macLine)
			b = append(b, raw[:statAt]...)
			b = append(b, "stat "+now+"\n"...)
			b = append(b, raw[statEnd:]...)
			return appendMAC(b, key)
		}
	}
	return f, restamp
}

// lazyResources are a cached File's resources, in the cache's form
// (appendResource) until asked for: s is the cache from the first
// resource on, at where each resource starts in s, in the file's order,
// and byURI their indexes in Lookup's order. readCache read and checked
// every one of them, so a decode here cannot fail.
type lazyResources struct {
	s     string
	at    []int32
	byURI []int32
	once  sync.Once
	// res are all the resources, decoded by the first all(); Lookup then
	// answers from them, as a parsed File does.
	res atomic.Pointer[[]Resource]
}

// all decodes every resource, once.
func (lz *lazyResources) all() []Resource {
	lz.once.Do(func() {
		res := make([]Resource, len(lz.at))
		for i := range res {
			lz.decode(int32(i), &res[i])
		}
		lz.res.Store(&res)
	})
	return *lz.res.Load()
}

// decode decodes resource i into r.
func (lz *lazyResources) decode(i int32, r *Resource) {
	cr := cacheReader{s: lz.s, i: int(lz.at[i])}
	cr.resource(r)
}

// uri is the namespace and path of resource i (its first strings), read
// in place.
func (lz *lazyResources) uri(i int32) identity.URI {
	cr := cacheReader{s: lz.s, i: int(lz.at[i])}
	return identity.URI{Namespace: cr.str(), Path: cr.str()}
}

// lookup is Lookup: a binary search of the index, and a decode of the
// resource found alone (or, once all are decoded, that one among them).
func (lz *lazyResources) lookup(u identity.URI) (*Resource, bool) {
	k := sort.Search(len(lz.byURI), func(k int) bool { return !uriLess(lz.uri(lz.byURI[k]), u) })
	if k == len(lz.byURI) {
		return nil, false
	}
	i := lz.byURI[k]
	if got := lz.uri(i); got.Namespace != u.Namespace || got.Path != u.Path {
		return nil, false
	}
	if res := lz.res.Load(); res != nil {
		return &(*res)[i], true
	}
	r := new(Resource)
	lz.decode(i, r)
	return r, true
}

// readCacheFile returns the cache file at path without its mac line, when
// it is a regular file of at most max bytes whose MAC checks under key
// (compared in constant time). Nothing of it is parsed before. It is read
// through a small buffer into one string, which the resources' strings
// then point into: the file is not held twice, and a process pays a page
// fault for every page it touches first. modTime is the file's
// modification time: when it was written or last marked used (markUsed).
func readCacheFile(path string, max int64, key []byte) (text string, modTime time.Time, ok bool) {
	// A regular file only, read to the size it has: the open does not
	// wait for a writer of a FIFO put at this name (O_NONBLOCK, which a
	// regular file ignores), and a device is not read without end.
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", modTime, false
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max || fi.Size() < int64(macLine) {
		return "", modTime, false
	}
	modTime = fi.ModTime()
	body := int(fi.Size()) - macLine
	var b strings.Builder
	b.Grow(body)
	m := hmac.New(sha256.New, key)
	buf := make([]byte, 16<<10)
	tail := make([]byte, 0, macLine)
	for {
		n, err := file.Read(buf)
		chunk := buf[:n]
		if k := min(len(chunk), body-b.Len()); k > 0 {
			m.Write(chunk[:k])
			b.Write(chunk[:k])
			chunk = chunk[k:]
		}
		if len(chunk) > cap(tail)-len(tail) {
			return "", modTime, false // grew while read
		}
		tail = append(tail, chunk...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", modTime, false
		}
	}
	// the line as appendMAC writes it, lower-case hex: compared whole
	want := append(hex.AppendEncode([]byte("mac "), m.Sum(nil)), '\n')
	if b.Len() != body || !hmac.Equal(tail, want) {
		return "", modTime, false
	}
	return b.String(), modTime, true
}

// noStamp is the stat line of a cache that records none.
const noStamp = "-"

// readSettings reads the policy file at path, open as file (at its start;
// Open opened it, once for the whole load), which must be size bytes
// whose SHA-256 is sum, and returns the text of its spans, in order. When
// the file's stat (fileStamp) is stamp, from start to end of the read,
// only the spans are read: the file is the one hashed when the stamp was
// recorded, as no change since can have left its change time alone (on a
// file system where the kernel keeps it: c.ctimeKept). Else the whole file
// is hashed; now is then its stat, the same before the read and after it,
// to record in the cache ("" when it cannot be), and ctime its change
// time.
func readSettings(c Cache, file *os.File, path string, size int, sum [32]byte, spans [][2]int, stamp string) (settings, now string, ctime time.Time, ok bool) {
	n := 0
	for _, s := range spans {
		n += s[1] - s[0]
	}
	before, err := file.Stat()
	if err != nil || before.Size() != int64(size) {
		return "", "", ctime, false
	}
	now, ctime, stamped := fileStamp(before)
	if stamped = stamped && c.ctimeKept(file, path); !stamped {
		now = ""
	}
	if stamped && stamp != noStamp && now == stamp {
		if text, ok := readSpans(file, n, spans); ok && stillStamped(file, stamp) {
			return text, now, ctime, true
		}
		// changed while read: hashed below, and not stamped anew
		now = ""
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			return "", "", ctime, false
		}
	}
	text := make([]byte, 0, n)
	h := sha256.New()
	buf := make([]byte, 64<<10)
	at, next := 0, 0 // the offset of buf[0] in the file, the span to copy
	for {
		k, err := file.Read(buf)
		chunk := buf[:k]
		h.Write(chunk)
		for next < len(spans) && spans[next][0] < at+k {
			s := spans[next]
			from, to := max(s[0], at), min(s[1], at+k)
			text = append(text, chunk[from-at:to-at]...)
			if s[1] > at+k {
				break
			}
			next++
		}
		at += k
		if at > size {
			return "", "", ctime, false
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", "", ctime, false
		}
	}
	var got [32]byte
	h.Sum(got[:0])
	if at != size || got != sum || next != len(spans) {
		return "", "", ctime, false
	}
	if now != "" && !stillStamped(file, now) {
		now = ""
	}
	return string(text), now, ctime, true
}

// readSpans reads the spans of file, n bytes in all, at their offsets.
func readSpans(file *os.File, n int, spans [][2]int) (string, bool) {
	b := make([]byte, n)
	at := 0
	for _, s := range spans {
		if _, err := file.ReadAt(b[at:at+s[1]-s[0]], int64(s[0])); err != nil {
			return "", false
		}
		at += s[1] - s[0]
	}
	return string(b), true
}

// stillStamped reports whether file's stat is stamp.
func stillStamped(file *os.File, stamp string) bool {
	fi, err := file.Stat()
	if err != nil {
		return false
	}
	now, _, ok := fileStamp(fi)
	return ok && now == stamp
}

// cacheInt reads a decimal number ended by end from the start of s.
func cacheInt(s string, end byte) (int, string, bool) {
	i := strings.IndexByte(s, end)
	if i < 1 || i > 12 {
		return 0, "", false
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil || n < 0 || strconv.Itoa(n) != s[:i] {
		return 0, "", false
	}
	return n, s[i+1:], true
}

// appendResource appends r in the cache's binary form: its strings each
// as a length (uvarint) and its bytes, its maps as the number of keys plus
// one (0 for nil) and the keys in order, each with its value, its MaxAge
// and Line as uvarints. Its source type and strategy are each a uvarint,
// 1 + the value's place in SourceTypes or Strategies, or 0 and the value
// as a string (format 3: the two names were a third of a filesystem
// resource's bytes, all of which a load reads and authenticates).
func appendResource(b []byte, r *Resource) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	strMap := func(m map[string]string) {
		if m == nil {
			b = append(b, 0)
			return
		}
		b = binary.AppendUvarint(b, uint64(len(m))+1)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			str(k)
			str(m[k])
		}
	}
	s := &r.Source
	str(r.URI.Namespace)
	str(r.URI.Path)
	str(r.URI.Tag)
	enum := func(v string, known func(int) (string, bool)) {
		for i := 0; ; i++ {
			k, ok := known(i)
			if !ok {
				b = append(b, 0)
				str(v)
				return
			}
			if k == v {
				b = binary.AppendUvarint(b, uint64(i)+1)
				return
			}
		}
	}
	enum(s.Type, sourceType)
	str(s.Path)
	str(s.URL)
	strMap(s.Headers)
	strMap(s.PublicHeaders)
	str(s.Owner)
	str(s.Repo)
	str(s.Ref)
	str(s.APIBase)
	str(s.TokenEnv)
	enum(string(r.Freshness.Strategy), strategy)
	b = binary.AppendUvarint(b, uint64(r.Freshness.MaxAge))
	str(r.Freshness.Snapshot)
	str(r.ContentType)
	str(r.Description)
	return binary.AppendUvarint(b, uint64(r.Line))
}

// cacheReader reads appendResource's form from s; bad is set at the first
// thing that does not fit.
type cacheReader struct {
	s   string
	i   int
	bad bool
}

func (cr *cacheReader) uint() uint64 {
	var x uint64
	for shift := uint(0); ; shift += 7 {
		if cr.i >= len(cr.s) || shift > 63 {
			cr.bad = true
			return 0
		}
		c := cr.s[cr.i]
		cr.i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
}

func (cr *cacheReader) str() string {
	n := cr.uint()
	if cr.bad || n > uint64(len(cr.s)-cr.i) {
		cr.bad = true
		return ""
	}
	s := cr.s[cr.i : cr.i+int(n)]
	cr.i += int(n)
	return s
}

func (cr *cacheReader) strMap() map[string]string {
	n := cr.uint()
	if n == 0 || cr.bad {
		return nil
	}
	n--
	if n > uint64(len(cr.s)-cr.i)/2 {
		cr.bad = true
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := cr.str()
		m[k] = cr.str()
	}
	if uint64(len(m)) != n {
		cr.bad = true // a key twice: not what appendResource writes
	}
	return m
}

// sourceType and strategy are the cache's codes of a source type and a
// strategy: the i-th known name, and whether there is one.
func sourceType(i int) (string, bool) {
	if i < len(SourceTypes) {
		return SourceTypes[i], true
	}
	return "", false
}

func strategy(i int) (string, bool) {
	if i < len(Strategies) {
		return string(Strategies[i]), true
	}
	return "", false
}

// enum reads what appendResource's enum wrote: a known name's code, or 0
// and a string.
func (cr *cacheReader) enum(known func(int) (string, bool)) string {
	k := cr.uint()
	if k == 0 || cr.bad {
		return cr.str()
	}
	if k > 1<<20 {
		cr.bad = true
		return ""
	}
	v, ok := known(int(k) - 1)
	if !ok {
		cr.bad = true
	}
	return v
}

// resource reads one resource into r.
func (cr *cacheReader) resource(r *Resource) {
	s := &r.Source
	r.URI = identity.URI{Namespace: cr.str(), Path: cr.str(), Tag: cr.str()}
	s.Type = cr.enum(sourceType)
	s.Path = cr.str()
	s.URL = cr.str()
	s.Headers = cr.strMap()
	s.PublicHeaders = cr.strMap()
	s.Owner = cr.str()
	s.Repo = cr.str()
	s.Ref = cr.str()
	s.APIBase = cr.str()
	s.TokenEnv = cr.str()
	r.Freshness.Strategy = Strategy(cr.enum(strategy))
	r.Freshness.MaxAge = time.Duration(cr.uint())
	r.Freshness.Snapshot = cr.str()
	r.ContentType = cr.str()
	r.Description = cr.str()
	r.Line = int(cr.uint())
}

// writeCache writes the cache encode makes to the cache file at path:
// beside it, then renamed there, so a reader sees a whole cache or the one
// before; a torn or lost write (no sync) fails the reader's MAC and costs
// a full parse, never a wrong policy. encode is called only once the
// temporary file is made, with its stat (it asks for the key, which it may make: a store
// that cannot take a cache makes none); nil writes nothing. The temporary
// name ends in ".lock": one a killed writer leaves is swept with the
// store's stale locks. Errors only lose the cache.
func (c Cache) writeCache(encode func(tmp os.FileInfo) []byte) {
	path := c.Path
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+"-*.lock")
	if err != nil {
		return
	}
	fi, _ := tmp.Stat()
	b := encode(fi)
	if b == nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return
	}
	_, err = tmp.Write(b)
	if err == nil {
		// readable by whom the directory lets in (a store shared with a group)
		if fi, serr := os.Stat(dir); serr == nil {
			err = tmp.Chmod(fi.Mode().Perm() & 0o666)
		}
	}
	if cerr := tmp.Close(); err != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
		return
	}
	if c.Dir != "" {
		c.evict(filepath.Base(path))
	}
}

// cacheUseEvery is how often a cache's use is recorded: a hit moves its
// modification time to the clock's time once it is this far from it, so
// a policy used on every command costs a metadata write a minute at most,
// not one a load. (The access time would cost none, but relatime moves it
// once a day at most and noatime never.)
const cacheUseEvery = time.Minute

// markUsed records a hit on the cache at Path, in a directory of caches
// (Dir), whose modification time was modTime: it becomes the clock's time
// when modTime is cacheUseEvery or more from it, either way (a time ahead
// of the clock would keep the cache first in line for ever). evict then
// removes the least recently used caches first. Errors (a read-only
// store, a cache of another user's) are ignored: the cache is used all the
// same, and merely goes sooner. The time is set within Dir (os.Root): a
// cache put there as a symbolic link to a file elsewhere (whoever can
// write the store, not the user's files) does not move that file's time.
func (c Cache) markUsed(modTime time.Time) {
	if c.Dir == "" {
		return
	}
	now := time.Now()
	if c.now != nil {
		now = c.now()
	}
	if d := now.Sub(modTime); d < cacheUseEvery && d > -cacheUseEvery {
		return
	}
	root, err := os.OpenRoot(c.Dir)
	if err != nil {
		return
	}
	defer root.Close()
	_ = root.Chtimes(filepath.Base(c.Path), now, now)
}

// evict removes caches from Dir, the least recently used first (by
// modification time, which a write sets and a use moves on: markUsed;
// then by name), until at most maxFiles are left and
// their sizes add up to at most maxBytes (those newer than the first
// removed are kept, older ones go); the cache kept, just written, is
// never removed. The cache file of format 3 and before (CacheFile itself)
// goes too. Errors are ignored: another command may be removing the same.
func (c Cache) evict(kept string) {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	type cacheEntry struct {
		name string
		fi   os.FileInfo
	}
	var caches []cacheEntry
	maxFiles, maxBytes, _ := c.limits()
	files, bytes := 1, int64(0)
	for _, e := range entries {
		switch name := e.Name(); {
		case name == CacheFile && e.Type().IsRegular():
			os.Remove(filepath.Join(c.Dir, name))
		case isCacheSlot(name) && e.Type().IsRegular():
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if name == kept {
				bytes += fi.Size()
				continue
			}
			caches = append(caches, cacheEntry{name, fi})
		}
	}
	slices.SortFunc(caches, func(a, b cacheEntry) int {
		// newest first
		return cmp.Or(b.fi.ModTime().Compare(a.fi.ModTime()), strings.Compare(a.name, b.name))
	})
	full := false
	for _, e := range caches {
		if full = full || files >= maxFiles || bytes+e.fi.Size() > int64(maxBytes); !full {
			files, bytes = files+1, bytes+e.fi.Size()
			continue
		}
		os.Remove(filepath.Join(c.Dir, e.name))
	}
}
