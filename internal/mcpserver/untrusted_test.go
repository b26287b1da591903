package mcpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/store"
)

// Fixture tokens, shaped as the server's (mcpauth.ParseToken): a string
// of any other shape is refused before any check.
const (
	goodToken = "rpmcp_" + "aaaaaaaaaaaaaaaa" + "aaaaaaaaaaaaaaaa" + "aaaaaaaaaaaaaaaa" + "aaaaaaaaaaaaaaaa"
	badToken  = "rpmcp_" + "bbbbbbbbbbbbbbbb" + "bbbbbbbbbbbbbbbb" + "bbbbbbbbbbbbbbbb" + "bbbbbbbbbbbbbbbb"
	boomToken = "rpmcp_" + "cccccccccccccccc" + "cccccccccccccccc" + "cccccccccccccccc" + "cccccccccccccccc"
)

// countingVerifier accepts one token (goodToken) and counts the checks
// made.
type countingVerifier struct {
	mu     sync.Mutex
	checks int
}

func (v *countingVerifier) verify(token string) (mcpauth.Caller, error) {
	v.mu.Lock()
	v.checks++
	v.mu.Unlock()
	if token == goodToken {
		return mcpauth.Caller{Name: "good", Scope: mcpauth.ScopeRead}, nil
	}
	return mcpauth.Caller{}, mcpauth.ErrUnknown
}

func (v *countingVerifier) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.checks
}

// post sends tools/list to h from remote with token ("" for none).
func post(h http.Handler, remote, token string) *httptest.ResponseRecorder {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(body))
	r.RemoteAddr = remote
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// untrustedHandler is the HTTP handler of a server without a store whose
// tokens verify checks, with a budget of burst refusals per address
// refilled at one per 1,000 s (not during a test).
func untrustedHandler(t *testing.T, verify func(string) (mcpauth.Caller, error), burst int) http.Handler {
	t.Helper()
	s, err := New(Options{Open: func() (*store.Store, error) { return nil, errors.New("no store in this test") }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.HTTPHandler(HTTPOptions{Verify: verify, UntrustedRate: 0.001, UntrustedBurst: burst})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestUntrustedBoundedPerAddress: requests refused for their token (none,
// or one the server did not issue) are bounded per remote address: past
// the burst an address gets 429 with Retry-After, tokenless requests
// unchecked and a refused token's after its check, while a valid token
// from another address is served (also an IPv6 neighbour outside the
// /64), as is one from the spent address itself, and a valid token's
// requests take nothing from its own address's budget. Before session 29
// each such request was checked and answered 401, as fast as it was sent.
func TestUntrustedBoundedPerAddress(t *testing.T) {
	var v countingVerifier
	// One refusal per 1,000 s beyond the burst: the bucket cannot refill
	// during the test.
	h := untrustedHandler(t, v.verify, 3)
	const junk = "10.0.0.1:4000"
	for i := range 3 {
		token := ""
		if i%2 == 1 {
			token = "rpmcp_" + strings.Repeat("0", 64)
		}
		if c := post(h, junk, token).Code; c != http.StatusUnauthorized {
			t.Fatalf("refusal %d within the burst: %d, want 401", i+1, c)
		}
	}
	checked := v.count()
	for i := range 10 {
		token := ""
		if i%2 == 1 {
			token = "rpmcp_" + strings.Repeat("1", 64)
		}
		w := post(h, junk, token)
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("past the burst: %d, want 429", w.Code)
		}
		if secs, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || secs < 1 {
			t.Fatalf("429 without a Retry-After in seconds: %q", w.Header().Get("Retry-After"))
		}
		if a := w.Header().Get("WWW-Authenticate"); a != "" {
			t.Errorf("a 429 with a challenge: %q", a)
		}
		if b := w.Body.String(); !strings.Contains(b, "too many requests refused for their token") {
			t.Errorf("past the burst, the answer: %q", b)
		}
	}
	if n := v.count() - checked; n != 5 {
		t.Errorf("past the burst the server checked %d tokens, want the 5 presented (none of the tokenless)", n)
	}
	// the same address on another port is the same address
	if c := post(h, "10.0.0.1:4001", "").Code; c != http.StatusTooManyRequests {
		t.Errorf("the refused address from another port: %d, want 429", c)
	}
	// another address's valid token, many times over: served, and its
	// own address's budget untouched by them
	for range 10 {
		if c := post(h, "10.0.0.2:5000", goodToken).Code; c != http.StatusOK {
			t.Fatalf("a valid token from another address: %d, want 200", c)
		}
	}
	for i := range 3 {
		if c := post(h, "10.0.0.2:5000", "").Code; c != http.StatusUnauthorized {
			t.Errorf("refusal %d of the address whose valid token was served: %d, want 401", i+1, c)
		}
	}
	// IPv6: the /64 is one address; the next /64 is another
	for i := range 3 {
		post(h, "[2001:db8:0:1::"+strconv.Itoa(i+1)+"]:80", "")
	}
	if c := post(h, "[2001:db8:0:1::99]:80", "").Code; c != http.StatusTooManyRequests {
		t.Errorf("a host of the refused /64: %d, want 429", c)
	}
	if c := post(h, "[2001:db8:0:1::99]:80", goodToken).Code; c != http.StatusOK {
		t.Errorf("a valid token from a host of the refused /64: %d, want 200", c)
	}
	if c := post(h, "[2001:db8:0:2::1]:80", goodToken).Code; c != http.StatusOK {
		t.Errorf("a valid token from the next /64: %d, want 200", c)
	}
}

// TestUntrustedLimiterBounded: the limiter remembers at most its bound of
// addresses, forgetting the one used least recently, so addresses that
// each send one refused request cannot grow it without end.
func TestUntrustedLimiterBounded(t *testing.T) {
	l := newUntrustedLimiter(0.001, 1, 8)
	now := time.Now()
	first, _ := addrKey("192.0.2.1:1")
	l.charge(first, now)
	for i := range 100 {
		a, _ := addrKey("198.51.100." + strconv.Itoa(i) + ":1")
		l.charge(a, now)
		l.wait(first, now) // used: kept
		if n := l.remembered(); n > 8 {
			t.Fatalf("%d addresses remembered, over the bound of 8", n)
		}
	}
	if l.wait(first, now) == 0 {
		t.Errorf("the address used most recently was forgotten")
	}
	old, _ := addrKey("198.51.100.0:1")
	if l.wait(old, now) != 0 {
		t.Errorf("the address used least recently was kept")
	}
}

// FuzzAddrKey: the key of a remote address never panics, is an IPv4
// address whole or an IPv6 /64 (never a wider prefix, which would put
// other hosts' refusals in one bucket), and does not depend on the port.
func FuzzAddrKey(f *testing.F) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:443", "[2001:db8::1%eth0]:1", "[::ffff:10.0.0.1]:5", "10.0.0.1", "x:1", "", "[]:0", "@"} {
		f.Add(s, uint16(8080))
	}
	f.Fuzz(func(t *testing.T, remote string, port uint16) {
		p, ok := addrKey(remote)
		if !ok {
			return
		}
		switch {
		case p.Addr().Is4() && p.Bits() != 32, p.Addr().Is6() && p.Bits() != 64, !p.IsValid():
			t.Fatalf("%q: key %v", remote, p)
		case p.Addr().Zone() != "" || p.Addr().Is4In6():
			t.Fatalf("%q: key %v keeps a zone or a mapped IPv4", remote, p)
		}
		// an IPv4 address written as IPv6 (::ffff:a.b.c.d, as a
		// dual-stack socket may give it) is that IPv4 address, not the
		// /64 every such address shares
		if host, _, err := net.SplitHostPort(remote); err == nil {
			if a, err := netip.ParseAddr(host); err == nil && a.Is4In6() && p != netip.PrefixFrom(a.Unmap(), 32) {
				t.Fatalf("%q: key %v, want %v/32", remote, p, a.Unmap())
			}
		}
		q, ok := addrKey(net.JoinHostPort(p.Addr().String(), strconv.Itoa(int(port))))
		if !ok || q != p {
			t.Fatalf("%q: key %v, and %v on port %d", remote, p, q, port)
		}
	})
}

// TestUntrustedChargedBeforeCheck: requests of one address sent at once
// are bounded as requests sent one after another: each takes its refusal
// before its token is checked, so with a burst of 3 and ten refused
// tokens arriving at once, three are answered 401 and seven 429, although
// all ten are checked (a token presented is checked whatever the budget:
// it could be valid). Before the re-read of session 29 a refusal was
// taken when its 401 was written, and all ten were answered 401.
func TestUntrustedChargedBeforeCheck(t *testing.T) {
	entered, hold := make(chan struct{}, 16), make(chan struct{})
	verify := func(string) (mcpauth.Caller, error) {
		entered <- struct{}{}
		<-hold
		return mcpauth.Caller{}, mcpauth.ErrUnknown
	}
	h := untrustedHandler(t, verify, 3)
	codes := make(chan int, 10)
	for range 10 {
		go func() { codes <- post(h, "10.0.0.9:4000", "rpmcp_"+strings.Repeat("2", 64)).Code }()
	}
	// every request either enters the check or is answered without one
	got, answered := map[int]int{}, 0
	for seen := 0; seen < 10; seen++ {
		select {
		case <-entered:
		case c := <-codes:
			got[c]++
			answered++
		}
	}
	close(hold)
	for ; answered < 10; answered++ {
		got[<-codes]++
	}
	if got[http.StatusUnauthorized] != 3 || got[http.StatusTooManyRequests] != 7 {
		t.Errorf("ten refused tokens at once, a burst of 3: %v, want three 401 and seven 429", got)
	}
}

// TestUntrustedGivenBack: a request takes its refusal only until its token
// is accepted, not for as long as its call runs, and gives it back on
// every path that is not a 401 (here a panic before any check): with a
// burst of 2, two calls held running and a panicking request leave the
// whole bucket for tokenless requests.
func TestUntrustedGivenBack(t *testing.T) {
	l := newUntrustedLimiter(0.001, 2, 8)
	running, hold := make(chan struct{}, 4), make(chan struct{})
	call := l.accepted(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running <- struct{}{}
		<-hold
	}))
	h := l.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer " + goodToken:
			call.ServeHTTP(w, r)
		case "Bearer " + boomToken:
			panic(http.ErrAbortHandler)
		default:
			http.Error(w, "no", http.StatusUnauthorized)
		}
	}))
	send := func(token string) int {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", nil)
		r.RemoteAddr = "10.0.0.7:1"
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		func() {
			defer func() { _ = recover() }()
			h.ServeHTTP(w, r)
		}()
		return w.Code
	}
	done := make(chan struct{})
	for range 2 {
		go func() { send(goodToken); done <- struct{}{} }()
		<-running
	}
	send(boomToken)
	for i := range 2 {
		if c := send(badToken); c != http.StatusUnauthorized {
			t.Errorf("refusal %d with two calls running and a panic behind: %d, want 401", i+1, c)
		}
	}
	if c := send(badToken); c != http.StatusTooManyRequests {
		t.Errorf("past the burst: %d, want 429", c)
	}
	close(hold)
	<-done
	<-done
}

// TestUntrustedLoopbackShared: on loopback every client of the machine has
// one address, so a local client without a token, or with a revoked one,
// spends the one budget; a valid token's requests from that address are
// still answered normally, as the README says (on IPv6 too, ::1), while
// the flooding client's are answered 429. Before the re-read of session
// 29 the valid token's were answered 429 as well, and any local process
// could lock every agent out.
func TestUntrustedLoopbackShared(t *testing.T) {
	var v countingVerifier
	h := untrustedHandler(t, v.verify, 2)
	revoked := "rpmcp_" + strings.Repeat("3", 64)
	for _, host := range []string{"127.0.0.1", "[::1]"} {
		if c := post(h, host+":4000", goodToken).Code; c != http.StatusOK {
			t.Fatalf("%s: a valid token before any refusal: %d", host, c)
		}
		for range 2 {
			post(h, host+":4001", "")
		}
		for i, tok := range []string{"", revoked, "", revoked} {
			if c := post(h, host+":4001", tok).Code; c != http.StatusTooManyRequests {
				t.Errorf("%s: the flooding client's request %d past the budget: %d, want 429", host, i+1, c)
			}
			if c := post(h, host+":4002", goodToken).Code; c != http.StatusOK {
				t.Errorf("%s: a valid token while another local client floods: %d, want 200", host, c)
			}
		}
	}
}

// TestUntrustedForgottenRefilled: as the README says, an address forgotten
// at the bound has its whole budget again, so a client sending from more
// addresses than the limiter remembers (IPv6 /64s of one wider prefix)
// gives back the budget of an address it spent; a mapped IPv4 address and
// a zone change nothing of the address's budget.
func TestUntrustedForgottenRefilled(t *testing.T) {
	l := newUntrustedLimiter(0.001, 1, 8)
	now := time.Now()
	spent, _ := addrKey("[2001:db8:0:100::1]:1")
	if l.take(spent, now) != 0 || l.take(spent, now) == 0 {
		t.Fatal("a burst of 1: the first refusal taken, the second not")
	}
	for _, same := range []string{"[2001:db8:0:100::2%eth0]:2", "[2001:db8:0:100:ffff::9]:3"} {
		if k, _ := addrKey(same); l.wait(k, now) == 0 {
			t.Errorf("%s: another host of the spent /64 has a budget", same)
		}
	}
	v4, _ := addrKey("192.0.2.7:1")
	l.take(v4, now)
	if k, _ := addrKey("[::ffff:192.0.2.7]:9"); l.wait(k, now) == 0 {
		t.Errorf("the spent IPv4 address written as IPv6 has a budget")
	}
	for i := range 8 {
		k, _ := addrKey("[2001:db8:0:" + strconv.Itoa(i+1) + "::1]:1")
		l.take(k, now)
	}
	if l.wait(spent, now) != 0 || l.take(spent, now) != 0 {
		t.Errorf("the spent /64, forgotten after 8 others: want its budget back, as documented")
	}
}

// TestUntrustedGivenBackOnceAccepted: through the server's handler, a
// valid token's request gives its refusal back once its token is accepted,
// while its call is still held (here at its second token check, the one
// made once it holds a slot): two such requests at a burst of 2 leave the
// address's whole budget.
func TestUntrustedGivenBackOnceAccepted(t *testing.T) {
	const slow1, slow2 = "rpmcp_" + "1111111111111111" + "1111111111111111" + "1111111111111111" + "1111111111111111",
		"rpmcp_" + "2222222222222222" + "2222222222222222" + "2222222222222222" + "2222222222222222"
	var mu sync.Mutex
	seen := map[string]int{}
	inside, hold := make(chan struct{}, 4), make(chan struct{})
	verify := func(token string) (mcpauth.Caller, error) {
		if token != slow1 && token != slow2 {
			return mcpauth.Caller{}, mcpauth.ErrUnknown
		}
		mu.Lock()
		seen[token]++
		n := seen[token]
		mu.Unlock()
		if n == 2 {
			inside <- struct{}{}
			<-hold
		}
		return mcpauth.Caller{Name: "slow", Scope: mcpauth.ScopeRead}, nil
	}
	h := untrustedHandler(t, verify, 2)
	done := make(chan int, 2)
	for _, tok := range []string{slow1, slow2} {
		go func() { done <- post(h, "10.0.0.8:1", tok).Code }()
		<-inside
	}
	for i := range 2 {
		if c := post(h, "10.0.0.8:2", "").Code; c != http.StatusUnauthorized {
			t.Errorf("refusal %d while two accepted calls are held: %d, want 401", i+1, c)
		}
	}
	close(hold)
	for range 2 {
		if c := <-done; c != http.StatusOK {
			t.Errorf("a held call: %d, want 200", c)
		}
	}
}

// TestUntrustedJunkTokensUnchecked: a string that is not shaped as a token
// the server issues ("rpmcp_" and 64 lower-case hex digits) cannot be
// valid, and is refused without a check (no stat of the token file, no
// hash): 401 within the address's budget, 429 past it, as a request
// without a token. Before session 30 each was checked, past the budget
// too (a valid token is never refused there), so a flood of junk cost a
// stat and a hash each.
func TestUntrustedJunkTokensUnchecked(t *testing.T) {
	var v countingVerifier
	h := untrustedHandler(t, v.verify, 3)
	hexes := strings.Repeat("0", 64)
	junk := []string{
		"good",
		"rpmcp_" + hexes[:63],  // a digit short
		"rpmcp_" + hexes + "0", // a digit over
		"rpmcp_" + strings.ToUpper("ab"+hexes[2:]), // upper case
		"rpmcp_" + "g" + hexes[1:],                 // not hex
		"RPMCP_" + hexes,                           // another prefix
		"rpmcp-" + hexes,
		strings.Repeat("x", 4096),
	}
	const addr = "10.0.0.3:4000"
	for i, tok := range junk[:3] {
		w := post(h, addr, tok)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("junk token %d within the budget: %d, want 401", i, w.Code)
		}
		if a := w.Header().Get("WWW-Authenticate"); !strings.Contains(a, `error="invalid_token"`) {
			t.Errorf("junk token %d within the budget: challenge %q, want invalid_token", i, a)
		}
	}
	for i, tok := range junk {
		w := post(h, addr, tok)
		if w.Code != http.StatusTooManyRequests {
			t.Errorf("junk token %d past the budget: %d, want 429", i, w.Code)
		}
		if secs, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || secs < 1 {
			t.Errorf("junk token %d past the budget: Retry-After %q", i, w.Header().Get("Retry-After"))
		}
	}
	// another address, within its budget: junk of every shape
	for i, tok := range junk {
		if c := post(h, "10.0.1."+strconv.Itoa(i)+":1", tok).Code; c != http.StatusUnauthorized {
			t.Errorf("junk token %d from a fresh address: %d, want 401", i, c)
		}
	}
	if n := v.count(); n != 0 {
		t.Errorf("the server checked %d junk tokens, want none", n)
	}
	// a well-shaped token is still checked, past the budget too, and a
	// valid one served from the spent address
	if c := post(h, addr, badToken).Code; c != http.StatusTooManyRequests {
		t.Errorf("a well-shaped refused token past the budget: %d, want 429", c)
	}
	if n := v.count(); n != 1 {
		t.Errorf("a well-shaped token presented: %d checks, want 1", n)
	}
	if c := post(h, addr, goodToken).Code; c != http.StatusOK {
		t.Errorf("a valid token from the spent address: %d, want 200", c)
	}
}

// TestUntrustedJunkStopsAtTheBudget: past an address's budget, the
// limiter itself answers a string not shaped as a token 429, as a request
// without one, and passes on to the token check only a well-shaped token
// (which may be valid). TestUntrustedJunkTokensUnchecked cannot tell the
// two apart: the check behind refuses junk on its shape too, and its 401
// becomes the same 429.
func TestUntrustedJunkStopsAtTheBudget(t *testing.T) {
	l := newUntrustedLimiter(0.001, 1, 16)
	var reached []string
	h := l.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.Header.Get("Authorization"))
		http.Error(w, "refused", http.StatusUnauthorized)
	}))
	const addr = "10.0.0.9:1"
	if c := post(h, addr, "junk").Code; c != http.StatusUnauthorized {
		t.Fatalf("junk within the budget: %d, want the check's 401", c)
	}
	for _, tok := range []string{"junk", strings.ToUpper(badToken), badToken + "0", badToken[:len(badToken)-1]} {
		if c := post(h, addr, tok).Code; c != http.StatusTooManyRequests {
			t.Errorf("junk of %d bytes past the budget: %d, want 429", len(tok), c)
		}
	}
	if len(reached) != 1 {
		t.Errorf("past the budget, %d junk tokens were passed on to the token check, want none", len(reached)-1)
	}
	if c := post(h, addr, badToken).Code; c != http.StatusTooManyRequests || len(reached) != 2 {
		t.Errorf("a well-shaped token past the budget: %d, passed on %v, want it checked and answered 429", c, len(reached) == 2)
	}
}

// FuzzWellShapedAsTheSDKReadsIt: past an address's budget the limiter
// passes on to the token check only a header it reads as a well-shaped
// token (presentsWellShapedToken); the SDK's bearer middleware reads the
// header itself. Whatever the header, a token the SDK would hand to the
// check shaped as ours (so possibly valid) is one the limiter passes on:
// a valid token is never refused by the budget for a header the two read
// apart (another split, another spelling of the scheme).
func FuzzWellShapedAsTheSDKReadsIt(f *testing.F) {
	for _, h := range []string{"Bearer " + goodToken, "bearer\t" + goodToken + " ", "BEARER  " + goodToken,
		"Bearer " + goodToken + "\u00a0", "Bearer\u0085" + goodToken, "Basic " + goodToken, "Bearer " + goodToken + " x",
		"Bearer " + strings.ToUpper(goodToken), "Bearer", "", "Bearer x y"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		var handed string
		sdk := auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			handed = token
			return nil, auth.ErrInvalidToken
		}, nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", nil)
		r.Header["Authorization"] = []string{header}
		sdk.ServeHTTP(httptest.NewRecorder(), r)
		if mcpauth.ParseToken(handed) == nil && !presentsWellShapedToken(r) {
			t.Fatalf("header %q: the SDK checks the well-shaped token in it, the limiter past the budget refuses it unchecked", header)
		}
	})
}
