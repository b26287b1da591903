package storecheck

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/readproof/readproof/gitstore"
)

// ErrSubset is wrapped by errors about a malformed Options.Subset.
var ErrSubset = errors.New("invalid read-data subset")

// Default sample of a structure check: every snapshot while a store holds at
// most defaultSampleAll of them, else about one in defaultSampleEvery.
const (
	defaultSampleAll   = 256
	defaultSampleEvery = 16
)

// sampler decides which snapshots are re-hashed. It looks only at the
// snapshot id, so the same store gives the same sample every time, and the
// buckets 1/M..M/M of a subset cover every snapshot exactly once.
type sampler struct {
	all     bool
	n, m    uint32  // bucket n (1-based) of m
	percent float64 // 0 < percent <= 100 when set
	desc    string
}

// ParseSubset checks a --read-data-subset value: "N/M" (1 <= N <= M <=
// 65536) selects bucket N of M, "P%" (0 < P <= 100) a fixed share.
func ParseSubset(s string) error {
	_, err := parseSubset(s)
	return err
}

func parseSubset(s string) (sampler, error) {
	bad := func(why string) (sampler, error) {
		return sampler{}, fmt.Errorf("%w %q: %s: write N/M (for example 1/5) or a percentage (for example 10%%)", ErrSubset, s, why)
	}
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 100 {
			return bad("the percentage must be above 0 and at most 100")
		}
		return sampler{percent: v, desc: "subset " + s}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return bad("no '/' or '%'")
	}
	n, err1 := strconv.ParseUint(a, 10, 32)
	m, err2 := strconv.ParseUint(b, 10, 32)
	if err1 != nil || err2 != nil || n < 1 || m < 1 || n > m || m > 65536 {
		return bad("N and M must be whole numbers with 1 <= N <= M <= 65536")
	}
	return sampler{n: uint32(n), m: uint32(m), desc: fmt.Sprintf("subset %d/%d", n, m)}, nil
}

// bucketValue is the first 32 bits of an object id.
func bucketValue(id gitstore.OID) uint32 {
	if len(id) < 8 {
		return 0
	}
	v, err := strconv.ParseUint(string(id[:8]), 16, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// pick reports whether snapshot id is in the sample; total is the number of
// distinct snapshots in the store (for the default sample).
func (s sampler) pick(id gitstore.OID, total int) bool {
	v := bucketValue(id)
	switch {
	case s.all:
		return true
	case s.m > 0:
		return v%s.m == s.n-1
	case s.percent > 0:
		return float64(v) < s.percent/100*float64(1<<32)
	}
	// default structure sample
	return total <= defaultSampleAll || v%defaultSampleEvery == 0
}
