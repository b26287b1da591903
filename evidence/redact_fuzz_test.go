package evidence

import "testing"

// FuzzSecretKeyASCII holds the hand-written check of an ASCII key to the
// credential pattern it stands in for, and leaves every other key to it.
func FuzzSecretKeyASCII(f *testing.F) {
	for _, k := range []string{"", "Authorization", "AUTHORISATION", "x-api-key", "API_KEY", "apikey", "api.key",
		"Cookie", "set-cookie", "passwd", "PassWord", "passphrase", "pass", "session_id", "Signature", "credentials",
		"private_key", "private key", "PrivateKey", "etag", "content-type", "url", "ref", "revision", "tok en",
		"\u212aey", "to\u212aen", "\u017fecret", "Se\u017f\u017fion", "\xff", "sessio", "x-auth-token"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		want := secretKey().MatchString(key)
		got, ascii := secretKeyASCII(key)
		isASCII := true
		for i := 0; i < len(key); i++ {
			if key[i] >= 0x80 {
				isASCII = false
			}
		}
		if ascii != isASCII {
			t.Fatalf("secretKeyASCII(%q): ascii %v, the key is ASCII: %v", key, ascii, isASCII)
		}
		if ascii && got != want {
			t.Fatalf("secretKeyASCII(%q) = %v, the pattern says %v", key, got, want)
		}
		if r := newRedactor(); r.secretKey(key) != want {
			t.Fatalf("redactor.secretKey(%q) = %v, the pattern says %v", key, !want, want)
		}
	})
}
