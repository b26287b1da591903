package adapters

import "github.com/readproof/readproof/adapters/sourcespec"

// Redacted is the placeholder shown instead of a credential-looking value.
const Redacted = sourcespec.Redacted

// The ${NAME} reference syntax and the redaction rules live in sourcespec;
// these names keep the adapters' code short.
var (
	parseRefs        = sourcespec.ParseRefs
	refNames         = sourcespec.RefNames
	expandRefs       = sourcespec.ExpandRefs
	validEnvName     = sourcespec.ValidEnvName
	badHeaderByte    = sourcespec.BadHeaderByte
	validHeaderName  = sourcespec.ValidHeaderName
	redactURL        = sourcespec.RedactURL
	credentialHeader = sourcespec.CredentialHeader
)

type unsetError = sourcespec.UnsetError

const (
	defaultGitHubAPI = sourcespec.DefaultGitHubAPI
	defaultGitHubRef = sourcespec.DefaultGitHubRef
	defaultGitRef    = sourcespec.DefaultGitRef
)

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
