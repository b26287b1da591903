package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// ambiguousMember finds what JSON readers disagree about in a bundle that
// the fast decoder handed to encoding/json: a member repeated in one object
// (encoding/json keeps the last, other readers the first or refuse), and a
// member of one of the format's objects whose name is one of the format's
// names in other case ("URI" for "uri": encoding/json takes it for the
// field, jq and Python do not). Either lets the value verified differ from
// the value an auditor's tool shows, so Verify refuses both. t is the Go
// type the document decodes into; a syntax error is left to encoding/json.
func ambiguousMember(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return strictValue(dec, t, 0)
}

// AmbiguousMember is the refusal Verify applies to a bundle, for a part of
// it that the evidence format carries as any JSON (proof_of_read,
// receipts) and its reader decodes into v's type: a member repeated in one
// object, or a member of one of the type's objects named in other case
// than its json tag. A reader decoding with DisallowUnknownFields as well
// is left with one spelling of every member, the one jq shows.
func AmbiguousMember(data []byte, v any) error {
	return ambiguousMember(data, reflect.TypeOf(v))
}

// maxStrictDepth: deeper documents are left to encoding/json, which refuses
// them.
const maxStrictDepth = 10000

func strictValue(dec *json.Decoder, t reflect.Type, depth int) error {
	if depth > maxStrictDepth {
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		t = nil
	}
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = map[string]reflect.Type{}
			jsonFields(t, fields)
		} else if t != nil && t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil
			}
			name, _ := k.(string)
			if seen[name] {
				return fmt.Errorf("member %q appears twice in one object: JSON readers disagree about which one counts", name)
			}
			seen[name] = true
			vt := elem
			if fields != nil {
				ft, ok := fields[name]
				if !ok {
					for known := range fields {
						if strings.EqualFold(known, name) {
							return fmt.Errorf("member %q is not the format's %q: member names are case-sensitive", name, known)
						}
					}
				}
				vt = ft
			}
			if err := strictValue(dec, vt, depth+1); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := strictValue(dec, elem, depth+1); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	}
	return nil
}

// jsonFields adds the member names encoding/json decodes into struct t (its
// embedded structs' included) with their types.
func jsonFields(t reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				jsonFields(ft, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
}
