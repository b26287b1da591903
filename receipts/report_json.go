package receipts

// JSONVersion is the version of the JSON shape below. Members may be added
// within a version; none is removed, renamed or given another meaning.
// Version 2 (session 30): strict_fail is true when a claim is
// other_session too, as --strict now fails on one; in version 1 it was
// not.
const JSONVersion = 2

// JSON is the stable --json shape of a claims report. Claims and Omitted are
// always arrays, never null.
type JSON struct {
	Version    int         `json:"version"`
	Session    string      `json:"session"`
	KeyID      string      `json:"key_id"`
	StrictFail bool        `json:"strict_fail"` // Report.Strict: whether --strict fails
	Counts     JSONCounts  `json:"counts"`
	Claims     []JSONClaim `json:"claims"`
	Omitted    []JSONClaim `json:"omitted"`
}

// JSONCounts counts claims per verdict, and the omitted receipts.
type JSONCounts struct {
	Claims       int `json:"claims"`
	Valid        int `json:"valid"`
	Fabricated   int `json:"fabricated"`
	Tampered     int `json:"tampered"`
	OtherSession int `json:"other_session"`
	UnknownKey   int `json:"unknown_key"`
	Omitted      int `json:"omitted"`
}

// JSONClaim is one claim (or one omitted receipt). The receipt members are
// set when a stored receipt could be decoded.
type JSONClaim struct {
	ID       string `json:"id"`
	Verdict  string `json:"verdict"`
	Detail   string `json:"detail"`
	Session  string `json:"session,omitempty"`
	Run      string `json:"run,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	KeyID    string `json:"key_id,omitempty"`
}

// JSON returns the report in its stable JSON shape.
func (r Report) JSON() JSON {
	j := JSON{
		Version: JSONVersion, Session: r.Session, KeyID: r.KeyID, StrictFail: r.Strict(),
		Claims: make([]JSONClaim, 0, len(r.Claims)), Omitted: make([]JSONClaim, 0, len(r.Omitted)),
	}
	j.Counts = JSONCounts{
		Claims: len(r.Claims), Valid: r.Count(Valid), Fabricated: r.Count(Fabricated),
		Tampered: r.Count(Tampered), OtherSession: r.Count(OtherSession), UnknownKey: r.Count(UnknownKey),
		Omitted: len(r.Omitted),
	}
	for _, c := range r.Claims {
		j.Claims = append(j.Claims, c.json())
	}
	for _, c := range r.Omitted {
		j.Omitted = append(j.Omitted, c.json())
	}
	return j
}

func (c ClaimResult) json() JSONClaim {
	j := JSONClaim{ID: c.ID, Verdict: string(c.Verdict), Detail: c.Detail}
	if r := c.Receipt; r != nil {
		j.Session, j.Run, j.Tool = r.Session, r.Run, r.Tool
		j.Start, j.End = formatTime(r.Start), formatTime(r.End)
		j.ExitCode, j.Signal, j.KeyID = r.ExitCode, r.Signal, r.KeyID
	}
	return j
}
