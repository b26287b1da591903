package telemetry

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is the OTLP/HTTP traces URL used when OTEL_TRACES_EXPORTER
// is "otlp" and no endpoint is set (the OTLP default).
const DefaultEndpoint = "http://localhost:4318/v1/traces"

// FlushTimeout bounds the wait for the last spans at exit; a smaller
// OTEL_EXPORTER_OTLP_TRACES_TIMEOUT (or OTEL_EXPORTER_OTLP_TIMEOUT) lowers it.
const FlushTimeout = 3 * time.Second

// Config is the exporter set-up the OTEL_* environment asks for.
type Config struct {
	// Endpoint is the full URL spans are posted to.
	Endpoint string
	// Headers are sent with every export (OTEL_EXPORTER_OTLP_HEADERS);
	// their values are secrets: never logged, never exported.
	Headers map[string]string
	// Timeout bounds one export request.
	Timeout time.Duration
	// Gzip compresses the request body.
	Gzip bool
}

// errConfig marks a setting readproof cannot honour; traces stay off.
var errConfig = errors.New("traces off")

// ConfigFromEnv reads the standard variables through getenv. on is false
// when traces are not configured (no endpoint and OTEL_TRACES_EXPORTER not
// "otlp") or turned off (OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none).
// An error names a setting that cannot be honoured (another exporter or
// protocol, a bad endpoint); traces are off then too.
func ConfigFromEnv(getenv func(string) string) (cfg Config, on bool, err error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return Config{}, false, nil
	}
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	signal := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	base := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	switch {
	case exporter == "none":
		return Config{}, false, nil
	case exporter != "" && exporter != "otlp":
		return Config{}, false, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%q: readproof exports traces with otlp only", errConfig, exporter)
	case exporter == "" && signal == "" && base == "":
		return Config{}, false, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			if p != "http/protobuf" {
				return Config{}, false, fmt.Errorf("%w: %s=%q: readproof speaks OTLP over http/protobuf only", errConfig, name, p)
			}
			break
		}
	}
	switch {
	case signal != "":
		cfg.Endpoint = signal
	case base != "":
		cfg.Endpoint = strings.TrimRight(base, "/") + "/v1/traces"
	default:
		cfg.Endpoint = DefaultEndpoint
	}
	u, perr := url.Parse(cfg.Endpoint)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The value may hold credentials: name the variable, not the value.
		return Config{}, false, fmt.Errorf("%w: the OTLP traces endpoint is not an http(s) URL", errConfig)
	}
	cfg.Timeout = 10 * time.Second
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			ms, err := strconv.Atoi(v)
			// a count past time.Duration's range (292 years) would wrap
			// to a negative wait
			if err != nil || ms <= 0 || int64(ms) > math.MaxInt64/int64(time.Millisecond) {
				return Config{}, false, fmt.Errorf("%w: %s=%q is not a positive number of milliseconds", errConfig, name, v)
			}
			cfg.Timeout = time.Duration(ms) * time.Millisecond
			break
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"} {
		if v := strings.ToLower(strings.TrimSpace(getenv(name))); v != "" {
			switch v {
			case "gzip":
				cfg.Gzip = true
			case "none":
			default:
				return Config{}, false, fmt.Errorf("%w: %s=%q: use gzip or none", errConfig, name, v)
			}
			break
		}
	}
	cfg.Headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if err := parseHeaders(getenv(name), cfg.Headers); err != nil {
			return Config{}, false, fmt.Errorf("%w: %s: %v", errConfig, name, err)
		}
	}
	return cfg, true, nil
}

// parseHeaders adds the W3C-baggage-like list "k1=v1,k2=v2" (values
// percent-encoded) to into; later lists override earlier keys. Errors
// never quote a value.
func parseHeaders(s string, into map[string]string) error {
	for i, item := range strings.Split(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("item %d is not key=value", i+1)
		}
		// A name that is not a header name is a slip such as
		// "Authorization: Basic KEY==": it holds part of the secret, so it
		// is not quoted (net/http's own error would quote it at export).
		if !headerName(k) {
			return fmt.Errorf(`item %d: the name before "=" is not an HTTP header name; write name=value pairs, values percent-encoded`, i+1)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("the value of %q is not percent-encoded text", k)
		}
		if strings.ContainsFunc(val, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return fmt.Errorf("the value of %q holds a control character", k)
		}
		into[k] = val
	}
	return nil
}

// headerName reports whether k is an HTTP field name (RFC 9110 token).
func headerName(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return k != ""
}
