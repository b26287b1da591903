package policy

import "github.com/readproof/readproof/adapters/sourcespec"

// fastDecode fills a rawFile from the fast reader's tree, as BurntSushi
// decodes into it, or gives up (ok false) on any key the schema does not
// name exactly and any value of another type: Parse then takes the slow
// path, which reports them. The keys are the struct tags of the raw types;
// TestFastDecodeKnowsEveryKey checks that every one of them is read here.
//
// The resources' sources are decoded into *res, a Resource for each
// [[resource]], each in the Source its Resource will hold: the checker
// then completes them in place (build), rather than copying each twice.
// The [[resource]] blocks the reader decoded already (read, when it was
// given one) are not read again.
func fastDecode(root *ftable, res *[]Resource, read *fastResources) (raw *rawFile, ok bool) {
	raw = &rawFile{}
	for i := range root.ents {
		k, v := root.ents[i].key, &root.ents[i].val
		switch k {
		case "version":
			raw.Version, ok = &v.n, v.kind == fInt
		case "defaults":
			ok = eachKey(v, func(k string, v *fval) bool {
				switch k {
				case "policy":
					return setStr(&raw.Defaults.Policy, v)
				case "max_age":
					return setStr(&raw.Defaults.MaxAge, v)
				case "max_bytes":
					switch v.kind {
					case fString:
						raw.Defaults.MaxBytes = &sizeValue{v: v.s}
						return true
					case fInt:
						raw.Defaults.MaxBytes = &sizeValue{v: v.n}
						return true
					}
				}
				return false
			})
		case "sources":
			ok = eachKey(v, func(k string, v *fval) bool {
				switch k {
				case "roots":
					l, ok := strList(v)
					raw.Sources.Roots = &l
					return ok
				case "env":
					l, ok := strList(v)
					raw.Sources.Env = l
					return ok
				case "cache_dir":
					return setStr(&raw.Sources.CacheDir, v)
				}
				return false
			})
		case "network":
			ok = eachKey(v, func(k string, v *fval) bool {
				var ok bool
				switch k {
				case "allow_hosts":
					raw.Network.AllowHosts, ok = strList(v)
				case "allow_cidrs":
					raw.Network.AllowCIDRs, ok = strList(v)
				case "timeout":
					ok = setStr(&raw.Network.Timeout, v)
				case "max_redirects":
					raw.Network.MaxRedirects, ok = &v.n, v.kind == fInt
				}
				return ok
			})
		case "signing":
			ok = eachKey(v, func(k string, v *fval) bool {
				switch k {
				case "key":
					return setStr(&raw.Signing.Key, v)
				case "allowed_signers":
					return setStr(&raw.Signing.AllowedSigners, v)
				}
				return false
			})
		case "probe", "receipts":
			dst := &raw.Probe
			if k == "receipts" {
				dst = &raw.Receipts
			}
			ok = eachKey(v, func(k string, v *fval) bool {
				return k == "key" && setStr(&dst.Key, v)
			})
		case "resource":
			var elems []fval
			switch v.kind {
			case fTables, fArray:
				elems = v.elems()
			default:
				return nil, false
			}
			if read != nil && cap(read.raw) > 0 {
				// [[resource]] blocks: those before the last were decoded
				// as the next began, and their tables are gone.
				if v.kind != fTables || len(read.raw) != len(elems)-1 {
					return nil, false
				}
				if !read.decode(&elems[len(elems)-1]) {
					return nil, false
				}
				raw.Resource, *res = read.raw, read.res
				ok = true
				break
			}
			raw.Resource = make([]rawResource, len(elems))
			if len(elems) > 0 {
				*res = make([]Resource, len(elems))
			}
			for j := range elems {
				if elems[j].kind != fTable || !fastResource(&raw.Resource[j], &(*res)[j].Source, elems[j].t) {
					return nil, false
				}
			}
			ok = true
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	return raw, true
}

// fastResource fills r from t; spec is the storage for r.Source.
// It keeps nothing of t: the strings in r.vals, the line and the keys of
// the source in r.line and r.srcKeys (the reader may reuse t's memory).
func fastResource(r *rawResource, spec *sourcespec.Spec, t *ftable) bool {
	r.line = t.line
	for i := range t.ents {
		k, v := t.ents[i].key, &t.ents[i].val
		var ok bool
		switch k {
		case "uri":
			ok = keepStr(&r.URI, &r.vals[0], v)
		case "policy":
			ok = keepStr(&r.Policy, &r.vals[1], v)
		case "max_age":
			ok = keepStr(&r.MaxAge, &r.vals[2], v)
		case "snapshot":
			ok = keepStr(&r.Snapshot, &r.vals[3], v)
		case "content_type":
			ok = keepStr(&r.ContentType, &r.vals[4], v)
		case "description":
			ok = keepStr(&r.Description, &r.vals[5], v)
		case "source":
			r.Source = spec
			ok = fastSource(spec, v, &r.srcKeys)
		}
		if !ok {
			return false
		}
	}
	return true
}

// sourceKeys are the keys of a source (the toml tags of sourcespec.Spec,
// TestSourceKeys holds them to it), in the order of fastSource's bits.
var sourceKeys = [...]string{"type", "path", "url", "headers", "public_headers", "owner", "repo", "ref", "api_base", "token_env"}

// fastSource fills s from v, and sets in *keys the bit of each key of
// sourceKeys that v sets.
func fastSource(s *sourcespec.Spec, v *fval, keys *uint16) bool {
	if v.kind != fTable {
		return false
	}
	t := v.t
	for i := range t.ents {
		k, v := t.ents[i].key, &t.ents[i].val
		bit := sourceKeyBit(k)
		if bit == 0 {
			return false
		}
		*keys |= bit
		var dst *string
		switch k {
		case "type":
			dst = &s.Type
		case "path":
			dst = &s.Path
		case "url":
			dst = &s.URL
		case "owner":
			dst = &s.Owner
		case "repo":
			dst = &s.Repo
		case "ref":
			dst = &s.Ref
		case "api_base":
			dst = &s.APIBase
		case "token_env":
			dst = &s.TokenEnv
		case "headers", "public_headers":
			if v.kind != fTable {
				return false
			}
			m := make(map[string]string, len(v.t.ents))
			for _, e := range v.t.ents {
				if e.val.kind != fString {
					return false
				}
				m[e.key] = e.val.s
			}
			if k == "headers" {
				s.Headers = m
			} else {
				s.PublicHeaders = m
			}
			continue
		default:
			return false
		}
		if v.kind != fString {
			return false
		}
		*dst = v.s
	}
	return true
}

// sourceKeyBit is k's bit in a set of sourceKeys, 0 for another key (a
// switch: the loop over sourceKeys was 4% of a parse).
func sourceKeyBit(k string) uint16 {
	switch k {
	case "type":
		return 1 << 0
	case "path":
		return 1 << 1
	case "url":
		return 1 << 2
	case "headers":
		return 1 << 3
	case "public_headers":
		return 1 << 4
	case "owner":
		return 1 << 5
	case "repo":
		return 1 << 6
	case "ref":
		return 1 << 7
	case "api_base":
		return 1 << 8
	case "token_env":
		return 1 << 9
	}
	return 0
}

// eachKey calls fn for each key of table v, in file order, until it
// returns false; false when v is not a table.
func eachKey(v *fval, fn func(k string, v *fval) bool) bool {
	if v.kind != fTable {
		return false
	}
	for i := range v.t.ents {
		if !fn(v.t.ents[i].key, &v.t.ents[i].val) {
			return false
		}
	}
	return true
}

// keepStr keeps v's string in *slot and points *dst at it.
func keepStr(dst **string, slot *string, v *fval) bool {
	*slot = v.s
	*dst = slot
	return v.kind == fString
}

// setStr points *dst at v's string, which the tree keeps.
func setStr(dst **string, v *fval) bool {
	*dst = &v.s
	return v.kind == fString
}

func strList(v *fval) ([]string, bool) {
	if v.kind != fArray {
		return nil, false
	}
	arr := v.elems()
	out := make([]string, len(arr))
	for i := range arr {
		if arr[i].kind != fString {
			return nil, false
		}
		out[i] = arr[i].s
	}
	return out, true
}

// fastIndex answers the checker's position questions from the fast
// reader's tree.
type fastIndex struct{ root fval }

// find returns the value at p and the line it is defined on.
func (x *fastIndex) find(p *keyPath) (v *fval, line int, ok bool) {
	if p == nil {
		return &x.root, 1, true
	}
	pv, pline, ok := x.find(p.parent)
	if !ok {
		return nil, 0, false
	}
	if p.isIdx {
		switch pv.kind {
		case fTables, fArray:
			if arr := pv.elems(); p.n >= 1 && p.n <= len(arr) {
				e := &arr[p.n-1]
				if e.kind == fTable {
					return e, e.t.line, true
				}
				return e, pline, true
			}
		}
		return nil, 0, false
	}
	if pv.kind != fTable {
		return nil, 0, false
	}
	v, i := pv.t.get(p.name)
	if i < 0 {
		return nil, 0, false
	}
	return v, int(pv.t.ents[i].val.line), true
}

// lineOf is positions.lineOf: the line of p or of its nearest ancestor.
func (x *fastIndex) lineOf(p *keyPath) int {
	for q := p; q != nil; q = q.parent {
		if _, line, ok := x.find(q); ok {
			return line
		}
	}
	return 0
}
