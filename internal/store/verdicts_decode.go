package store

// DecodeVerdicts parses verdicts.json of run runID as a verdict chain
// commit stores it (docs/store-format.md, "Proof-of-read verdicts"): the
// format, the run id and the members are checked, the manifest is not. Sync
// uses it to refuse a pulled verdict chain that does not decode.
func DecodeVerdicts(runID string, data []byte) (*VerdictRecord, error) {
	return decodeVerdicts(runID, data)
}

// VerdictsFile is the name of the one file of a verdict commit's tree.
const VerdictsFile = verdictsFile
