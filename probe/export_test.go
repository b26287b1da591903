package probe

import "time"

// CheckAnswerCompared is CheckAnswer that also returns the number of
// candidates a sentinel was compared with, for TestCheckAnswerLinear.
func (k Keys) CheckAnswerCompared(entries []Issued, answer string, now time.Time, opts AnswerOptions) ([]Result, int, error) {
	compared := 0
	rs, err := k.checkAnswer(entries, answer, now, opts, &compared)
	return rs, compared, err
}
