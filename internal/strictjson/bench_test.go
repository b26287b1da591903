package strictjson

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// benchDoc is a document of n items of plain values (strings, numbers,
// booleans, null), each in an object of outer's shape.
func benchDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"bench","items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"uri":"readproof://bench/docs/d%05d","n":%d,"ok":true,"none":null}`, i, i)
	}
	b.WriteString(`],"raw":{"a":1}}`)
	return []byte(b.String())
}

// BenchmarkCheck checks a document of 1,000 objects of plain values
// against a struct type's shape: the cost every format using the rule
// pays at each read.
func BenchmarkCheck(b *testing.B) {
	data := benchDoc(1000)
	s := Type(reflect.TypeFor[outer]())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(data, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckDecoder is BenchmarkCheck read by encoding/json's
// Decoder.Token, as Members did before session 28 (oracleMembers): the
// comparison's other side.
func BenchmarkCheckDecoder(b *testing.B) {
	data := benchDoc(1000)
	s := Type(reflect.TypeFor[outer]())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Text(data); err != nil {
			b.Fatal(err)
		}
		if err := oracleMembers(data, s); err != nil {
			b.Fatal(err)
		}
	}
}
