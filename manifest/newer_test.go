package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeNewerFormat: a manifest a later readproof wrote (a later format,
// and fields this one does not know) is refused as ErrInvalid and
// ErrNewerFormat, with a message that says so, rather than as a broken
// manifest ("unknown field", "want readproof-manifest/1"), so the fix
// offered is an upgrade, not a restore from backup. Other formats stay
// plain invalid.
func TestDecodeNewerFormat(t *testing.T) {
	good, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	newer := map[string]string{
		"format":           strings.Replace(string(good), Format, "readproof-manifest/2", 1),
		"format and field": strings.Replace(strings.Replace(string(good), Format, "readproof-manifest/12", 1), `"run_id"`, `"new_member": {"x": 1}, "run_id"`, 1),
	}
	for name, data := range newer {
		_, err := Decode([]byte(data))
		if !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "newer version of readproof") {
			t.Errorf("%s: Decode = %v, want ErrInvalid and ErrNewerFormat, saying a newer readproof wrote it", name, err)
		}
	}
	for name, f := range map[string]string{"older": "readproof-manifest/0", "other": "readproof-manifest/x", "foreign": "something/2"} {
		_, err := Decode([]byte(strings.Replace(string(good), Format, f, 1)))
		if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrNewerFormat) {
			t.Errorf("%s: Decode = %v, want ErrInvalid only", name, err)
		}
	}
}
