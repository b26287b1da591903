package adapters

import "github.com/readproof/readproof/adapters/sourcespec"

// Redacted is the placeholder shown instead of a credential-looking value.
const Redacted = sourcespec.Redacted

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
