package evidence

import (
	"reflect"

	"github.com/readproof/readproof/internal/strictjson"
)

// ambiguousMember finds what JSON readers disagree about in a bundle that
// the fast decoder handed to encoding/json: a member repeated in one object
// (encoding/json keeps the last, other readers the first or refuse), and a
// member of one of the format's objects whose name is one of the format's
// names in other case ("URI" for "uri": encoding/json takes it for the
// field, jq and Python do not). Either lets the value verified differ from
// the value an auditor's tool shows, so Verify refuses both. t is the Go
// type the document decodes into; a syntax error is left to encoding/json.
// The rule is strictjson's, which also refuses text that is not UTF-8 or a
// \u escape of half a surrogate pair (strictjson.Text): encoding/json reads
// it as U+FFFD, Python refuses the file.
func ambiguousMember(data []byte, t reflect.Type) error {
	return strictjson.Check(data, strictjson.Type(t))
}
