package manifest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestTraceIDGolden pins manifest.json with a trace id (the field comes
// last and only when set) and checks that one without it still encodes to
// the old golden bytes, so manifests written before the field keep their
// ids and verify.
func TestTraceIDGolden(t *testing.T) {
	m := sample()
	m.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "manifest-trace.json", data)
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.TraceID != m.TraceID {
		t.Fatalf("trace id %q after decoding, want %q", back.TraceID, m.TraceID)
	}
	plain, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain, []byte("trace_id")) {
		t.Fatal("a manifest without a trace id has a trace_id field")
	}
	if without := strings.Replace(string(data), ",\n  \"trace_id\": \""+m.TraceID+"\"", "", 1); without != string(plain) {
		t.Fatal("the trace id changed more than its own field")
	}
}

func TestTraceIDRejects(t *testing.T) {
	for _, id := range []string{
		"00000000000000000000000000000000",  // all zero: invalid in W3C
		"4BF92F3577B34DA6A3CE929D0E0E4736",  // uppercase
		"4bf92f3577b34da6a3ce929d0e0e473",   // 31 digits
		"4bf92f3577b34da6a3ce929d0e0e47366", // 33 digits
		"4bf92f3577b34da6a3ce929d0e0e473g",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // a whole traceparent
	} {
		m := sample()
		m.TraceID = id
		if _, err := Encode(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("trace id %q: Encode error %v, want ErrInvalid", id, err)
		}
		good := sample()
		good.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		data, _ := Encode(good)
		bad := strings.Replace(string(data), good.TraceID, id, 1)
		if _, err := Decode([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("trace id %q: Decode error %v, want ErrInvalid", id, err)
		}
	}
}
