package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exporter posts spans to an OTLP/HTTP endpoint as a protobuf
// ExportTraceServiceRequest (opentelemetry-proto, collector/trace/v1).
type exporter struct {
	cfg    Config
	client *http.Client

	mu sync.Mutex
	// users is the number of batchers that export through it and have not
	// shut it down; at 0 it exports nothing more.
	users int
}

func newExporter(cfg Config, users int) *exporter {
	return &exporter{cfg: cfg, users: users, client: &http.Client{
		Timeout: cfg.Timeout,
		// A redirect is not followed: net/http would carry the
		// OTEL_EXPORTER_OTLP_HEADERS (the collector's API key) to
		// wherever the Location names. A 3xx is a failed export.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	done := e.users <= 0
	e.mu.Unlock()
	if done || len(spans) == 0 {
		return nil
	}
	body := encodeRequest(spans)
	if e.cfg.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		body = buf.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.Endpoint, bytes.NewReader(body))
	if err != nil {
		return errors.New("OTLP export: the endpoint cannot be requested")
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// url.Error quotes the URL, which may carry credentials; keep
		// only the cause (dial errors name host:port, not the path).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("OTLP export: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	// The status code only: the reason phrase is the collector's text, and
	// may hold anything a terminal would act on.
	status := strconv.Itoa(resp.StatusCode)
	if t := http.StatusText(resp.StatusCode); t != "" {
		status += " " + t
	}
	if resp.StatusCode/100 == 3 {
		return fmt.Errorf("OTLP export: the endpoint answered %s: exports follow no redirect, so the OTLP headers reach the configured endpoint only; set the collector's final URL", status)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("OTLP export: the endpoint answered %s", status)
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter: each batcher that exports
// through e shuts it down once; the last one closes it.
func (e *exporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.users--
	last := e.users == 0
	e.mu.Unlock()
	if last {
		e.client.CloseIdleConnections()
	}
	return nil
}

// The protobuf wire encoding of the OTLP messages readproof sends. Field
// numbers are those of opentelemetry-proto (trace/v1/trace.proto,
// common/v1/common.proto, resource/v1/resource.proto); the receiver test
// decodes the result with the generated Go types.

type pb struct{ b []byte }

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func (p *pb) tag(field, wire int) { p.varint(uint64(field)<<3 | uint64(wire)) }

func (p *pb) varint(v uint64) {
	for v >= 0x80 {
		p.b = append(p.b, byte(v)|0x80)
		v >>= 7
	}
	p.b = append(p.b, byte(v))
}

func (p *pb) bytesField(field int, v []byte) {
	p.tag(field, wireBytes)
	p.varint(uint64(len(v)))
	p.b = append(p.b, v...)
}

func (p *pb) str(field int, v string) {
	if v == "" {
		return
	}
	p.tag(field, wireBytes)
	p.varint(uint64(len(v)))
	p.b = append(p.b, v...)
}

func (p *pb) uvarint(field int, v uint64) {
	if v == 0 {
		return
	}
	p.tag(field, wireVarint)
	p.varint(v)
}

func (p *pb) fixed64(field int, v uint64) {
	p.tag(field, wireFixed64)
	for i := 0; i < 8; i++ {
		p.b = append(p.b, byte(v>>(8*i)))
	}
}

func (p *pb) fixed32(field int, v uint32) {
	p.tag(field, wireFixed32)
	for i := 0; i < 4; i++ {
		p.b = append(p.b, byte(v>>(8*i)))
	}
}

// message writes field as a length-delimited sub-message built by fn.
func (p *pb) message(field int, fn func(*pb)) {
	var sub pb
	fn(&sub)
	p.bytesField(field, sub.b)
}

// encodeRequest is ExportTraceServiceRequest{resource_spans: 1}: one
// ResourceSpans per resource, one ScopeSpans per scope, in the order spans
// came.
func encodeRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resGroup struct {
		res    *resource.Resource
		scopes []*scopeGroup
	}
	var groups []*resGroup
	for _, s := range spans {
		var g *resGroup
		for _, x := range groups {
			if x.res.Equal(s.Resource()) {
				g = x
				break
			}
		}
		if g == nil {
			g = &resGroup{res: s.Resource()}
			groups = append(groups, g)
		}
		var sg *scopeGroup
		for _, x := range g.scopes {
			if x.scope == s.InstrumentationScope() {
				sg = x
				break
			}
		}
		if sg == nil {
			sg = &scopeGroup{scope: s.InstrumentationScope()}
			g.scopes = append(g.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	var p pb
	for _, g := range groups {
		p.message(1, func(rs *pb) {
			rs.message(1, func(r *pb) { // Resource
				if g.res != nil {
					for _, kv := range g.res.Attributes() {
						r.message(1, func(m *pb) { keyValue(m, kv) })
					}
				}
			})
			for _, sg := range g.scopes {
				rs.message(2, func(ss *pb) { // ScopeSpans
					ss.message(1, func(sc *pb) { // InstrumentationScope
						sc.str(1, sg.scope.Name)
						sc.str(2, sg.scope.Version)
					})
					for _, s := range sg.spans {
						ss.message(2, func(m *pb) { span(m, s) })
					}
					ss.str(3, sg.scope.SchemaURL)
				})
			}
			if g.res != nil {
				rs.str(3, g.res.SchemaURL())
			}
		})
	}
	return p.b
}

// span encodes one Span.
func span(p *pb, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	p.bytesField(1, tid[:])
	p.bytesField(2, sid[:])
	p.str(3, sc.TraceState().String())
	parent := s.Parent()
	if parent.SpanID().IsValid() {
		psid := parent.SpanID()
		p.bytesField(4, psid[:])
	}
	p.str(5, s.Name())
	p.uvarint(6, uint64(s.SpanKind())) // the Go and OTLP enums agree: 1 internal .. 5 consumer
	p.fixed64(7, uint64(s.StartTime().UnixNano()))
	p.fixed64(8, uint64(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		p.message(9, func(m *pb) { keyValue(m, kv) })
	}
	p.uvarint(10, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		p.message(11, func(m *pb) {
			m.fixed64(1, uint64(ev.Time.UnixNano()))
			m.str(2, ev.Name)
			for _, kv := range ev.Attributes {
				m.message(3, func(a *pb) { keyValue(a, kv) })
			}
			m.uvarint(4, uint64(ev.DroppedAttributeCount))
		})
	}
	p.uvarint(12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		p.message(13, func(m *pb) {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			m.bytesField(1, ltid[:])
			m.bytesField(2, lsid[:])
			m.str(3, l.SpanContext.TraceState().String())
			for _, kv := range l.Attributes {
				m.message(4, func(a *pb) { keyValue(a, kv) })
			}
			m.uvarint(5, uint64(l.DroppedAttributeCount))
			m.fixed32(6, spanFlags(uint32(l.SpanContext.TraceFlags()), l.SpanContext.IsRemote()))
		})
	}
	p.uvarint(14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		p.message(15, func(m *pb) {
			m.str(2, st.Description)
			code := uint64(1) // STATUS_CODE_OK
			if st.Code == codes.Error {
				code = 2 // STATUS_CODE_ERROR
			}
			m.uvarint(3, code)
		})
	}
	p.fixed32(16, spanFlags(uint32(sc.TraceFlags()), parent.IsValid() && parent.IsRemote()))
}

// spanFlags is Span.flags: the W3C trace flags in bits 0-7, and bits 8-9
// saying that whether the parent is remote is known, and if it is.
func spanFlags(traceFlags uint32, remote bool) uint32 {
	f := traceFlags&0xff | 0x100
	if remote {
		f |= 0x200
	}
	return f
}

// keyValue encodes a KeyValue{key: 1, value: 2}.
func keyValue(p *pb, kv attribute.KeyValue) {
	p.str(1, string(kv.Key))
	p.message(2, func(m *pb) { anyValue(m, kv.Value) })
}

// anyValue encodes an AnyValue: string 1, bool 2, int 3, double 4,
// array 5, kvlist 6, bytes 7.
func anyValue(p *pb, v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		p.tag(2, wireVarint)
		if v.AsBool() {
			p.varint(1)
		} else {
			p.varint(0)
		}
	case attribute.INT64:
		p.tag(3, wireVarint)
		p.varint(uint64(v.AsInt64()))
	case attribute.FLOAT64:
		p.fixed64(4, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		// a URI or path a client sent may hold its bearer token
		s := MaskTokens(v.AsString())
		p.tag(1, wireBytes)
		p.varint(uint64(len(s)))
		p.b = append(p.b, s...)
	case attribute.BYTESLICE:
		p.bytesField(7, v.AsByteSlice())
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE, attribute.SLICE:
		p.message(5, func(arr *pb) {
			for _, e := range sliceValues(v) {
				arr.message(1, func(m *pb) { anyValue(m, e) })
			}
		})
	case attribute.MAP:
		p.message(6, func(list *pb) {
			for _, kv := range v.AsMap() {
				list.message(1, func(m *pb) { keyValue(m, kv) })
			}
		})
	}
}

func sliceValues(v attribute.Value) []attribute.Value {
	var out []attribute.Value
	switch v.Type() {
	case attribute.BOOLSLICE:
		for _, x := range v.AsBoolSlice() {
			out = append(out, attribute.BoolValue(x))
		}
	case attribute.INT64SLICE:
		for _, x := range v.AsInt64Slice() {
			out = append(out, attribute.Int64Value(x))
		}
	case attribute.FLOAT64SLICE:
		for _, x := range v.AsFloat64Slice() {
			out = append(out, attribute.Float64Value(x))
		}
	case attribute.STRINGSLICE:
		for _, x := range v.AsStringSlice() {
			out = append(out, attribute.StringValue(x))
		}
	case attribute.SLICE:
		out = v.AsSlice()
	}
	return out
}
