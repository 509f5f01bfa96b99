package stats

import "fmt"

// FormatUSD is how a cost reads wherever Muster shows one (the CLI, the
// web pages): "+" says some of the usage has no price, and a cost made
// only of unpriced usage is "unknown", never $0.
func FormatUSD(usd float64, unpricedTokens int64) string {
	if usd == 0 && unpricedTokens > 0 {
		return "unknown"
	}
	s := fmt.Sprintf("$%.2f", usd)
	if usd > 0 && usd < 1 {
		s = fmt.Sprintf("$%.4f", usd)
	}
	if unpricedTokens > 0 {
		s += "+"
	}
	return s
}
