package sourcespec

import (
	"errors"
	"net/netip"
	"os"
	"time"

	"github.com/readproof/readproof/internal/progress"
)

// Spec is a resource's source as declared in readproof.toml. Values keep
// their ${NAME} references; adapters expand them at fetch time.
type Spec struct {
	Type    string            `toml:"type" json:"type" hint:"write type = \"filesystem\", \"http\", \"github\" or \"git\""`
	Path    string            `toml:"path,omitempty" json:"path,omitempty" hint:"write path = \"docs/file.md\""`
	URL     string            `toml:"url,omitempty" json:"url,omitempty" hint:"write url = \"https://host/path\""`
	Headers map[string]string `toml:"headers,omitempty" json:"headers,omitempty" hint:"write headers = { Authorization = \"Bearer ${TOKEN}\" }, naming a variable listed in [sources] env"`
	// PublicHeaders are header values the policy file declares not secret
	// (public_headers = { Accept = "text/markdown" }): sent as written, and
	// stored and shown as written. A value in Headers must reference an
	// environment variable (${NAME}); a literal belongs here or nowhere.
	PublicHeaders map[string]string `toml:"public_headers,omitempty" json:"public_headers,omitempty" hint:"write public_headers = { Accept = \"text/markdown\" }"`
	Owner         string            `toml:"owner,omitempty" json:"owner,omitempty" hint:"write owner = \"acme\""`
	Repo          string            `toml:"repo,omitempty" json:"repo,omitempty" hint:"write repo = \"company-docs\""`
	Ref           string            `toml:"ref,omitempty" json:"ref,omitempty" hint:"write ref = \"main\" (a branch, tag or commit)"`
	APIBase       string            `toml:"api_base,omitempty" json:"api_base,omitempty" hint:"write api_base = \"https://github.example.com/api/v3\""`
	TokenEnv      string            `toml:"token_env,omitempty" json:"token_env,omitempty" hint:"write token_env = \"GITHUB_TOKEN\", a variable listed in [sources] env"`
}

// Env is what the policy file allows sources to do.
type Env struct {
	// BaseDir is the directory of readproof.toml; relative paths are
	// relative to it.
	BaseDir string
	// Roots are the directories filesystem sources may read (absolute).
	// Empty means BaseDir only.
	Roots []string
	// EnvAllow lists the environment variables ${NAME} may expand.
	EnvAllow []string
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Network is the address policy for http, github and git over http.
	Network NetPolicy
	// MaxBytes bounds one document. Zero means DefaultMaxBytes.
	MaxBytes int64
	// CacheDir holds the git adapter's clones, outside the evidence store.
	CacheDir string
	// LockWait, when set, hears once of a long wait for a lock another
	// process holds (a git mirror's, while it fetches); nil: silent.
	LockWait func(progress.Wait)
	// Warn, when set, hears what a source could read only in part and
	// went on without (an ssh configuration's Match block, which is not
	// applied); nil: silent.
	Warn func(error)
}

// NetPolicy bounds network sources.
type NetPolicy struct {
	AllowHosts []string
	AllowCIDRs []netip.Prefix
	Timeout    time.Duration
	// MaxRedirects is how many redirects a fetch follows: 0 means
	// DefaultMaxRedirects, a negative number none.
	MaxRedirects int
}

// Defaults used when the policy file says nothing.
const (
	DefaultMaxBytes     = 10 << 20
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
)

// Errors shared by the policy file parser and the adapters; match them with
// errors.Is.
var (
	// ErrRefused: a source or value is refused by policy.
	ErrRefused = errors.New("refused by policy")
	// ErrConfig: a source is declared wrongly.
	ErrConfig = errors.New("invalid source configuration")
)

// MaxMaxBytes is the largest size limit a source applies: a larger
// max_bytes (up to the largest int64, written to mean "no limit") counts
// as this. Sources read max+1 bytes to tell a document over the limit, and
// the github source up to twice the limit of JSON: with max_bytes near
// 2^63 those counts overflowed to negative ones, and every document read
// as empty bytes, without an error. No document comes near it: each is
// held whole in memory.
const MaxMaxBytes = 1 << 61

// MaxBytesOrDefault returns env's size limit with the default applied,
// at most MaxMaxBytes.
func (e Env) MaxBytesOrDefault() int64 {
	if e.MaxBytes > 0 {
		return min(e.MaxBytes, MaxMaxBytes)
	}
	return DefaultMaxBytes
}

// EnvAllowed reports whether name is in env's allow-list.
func (e Env) EnvAllowed(name string) bool {
	for _, n := range e.EnvAllow {
		if n == name {
			return true
		}
	}
	return false
}

// Lookup returns the function that reads the environment: LookupEnv, or
// os.LookupEnv when it is nil.
func (e Env) Lookup() func(string) (string, bool) {
	if e.LookupEnv != nil {
		return e.LookupEnv
	}
	return os.LookupEnv
}
