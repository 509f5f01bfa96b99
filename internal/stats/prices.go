package stats

import (
	"maps"
	"regexp"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// Price is a model's list price in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// PricesAsOf and PricesSource say when the price table was last checked
// and against what; reports carry them (Report.PriceTable).
const (
	PricesAsOf   = "2026-12-02"
	PricesSource = "the vendors' published API list prices (Anthropic, OpenAI, Google), written in on 2026-11-30; " +
		"checked model by model against LiteLLM's model_prices_and_context_window.json as ccusage 20.0.24 embeds it " +
		"(bench/history.sh runs the check)"
)

// PriceTableInfo names the price table a report used.
type PriceTableInfo struct {
	AsOf   string `json:"as_of"`
	Source string `json:"source"`
}

// Prices returns a copy of the price table, by model key (NormalizeModel).
func Prices() map[string]Price { return maps.Clone(prices) }

// prices is a small built-in table of APPROXIMATE public list prices (USD
// per million tokens, standard tier); PricesSource says where from. ccusage
// prices from LiteLLM's table at run time, which follows vendor changes and
// long-context tiers this table does not.
// It ignores long-context tiers, batch and regional discounts, and vendor
// price changes since; a cost computed from it is an estimate, never a bill.
// Models not listed are reported as unpriced rather than guessed: newer
// models often change price even within a family. Cache writes use the
// 5-minute rate (1.25× input) for Claude; OpenAI and Google bill cached
// input at the cached rate and have no separate write price.
var prices = map[string]Price{
	// Anthropic
	"claude-opus-4-5":   {5, 25, 0.50, 6.25},
	"claude-opus-4-1":   {15, 75, 1.50, 18.75},
	"claude-opus-4":     {15, 75, 1.50, 18.75},
	"claude-sonnet-4-5": {3, 15, 0.30, 3.75},
	"claude-sonnet-4":   {3, 15, 0.30, 3.75},
	"claude-3-7-sonnet": {3, 15, 0.30, 3.75},
	"claude-3-5-sonnet": {3, 15, 0.30, 3.75},
	"claude-haiku-4-5":  {1, 5, 0.10, 1.25},
	"claude-3-5-haiku":  {0.80, 4, 0.08, 1},
	"claude-3-opus":     {15, 75, 1.50, 18.75},
	"claude-3-haiku":    {0.25, 1.25, 0.03, 0.30},
	// OpenAI
	"gpt-5":         {1.25, 10, 0.125, 0},
	"gpt-5-codex":   {1.25, 10, 0.125, 0},
	"gpt-5.1":       {1.25, 10, 0.125, 0},
	"gpt-5.1-codex": {1.25, 10, 0.125, 0},
	"gpt-5-mini":    {0.25, 2, 0.025, 0},
	"gpt-5-nano":    {0.05, 0.40, 0.005, 0},
	"gpt-4.1":       {2, 8, 0.50, 0},
	"gpt-4.1-mini":  {0.40, 1.60, 0.10, 0},
	"gpt-4.1-nano":  {0.10, 0.40, 0.025, 0},
	"gpt-4o":        {2.50, 10, 1.25, 0},
	"gpt-4o-mini":   {0.15, 0.60, 0.075, 0},
	"o3":            {2, 8, 0.50, 0},
	"o4-mini":       {1.10, 4.40, 0.275, 0},
	"codex-mini":    {1.50, 6, 0.375, 0}, // codex-mini-latest: NormalizeModel drops -latest
	// Google
	// Cached input at a tenth of input, as Google has billed it since
	// implicit caching (LiteLLM agrees; the 2025 table had a quarter).
	"gemini-2.5-pro":        {1.25, 10, 0.125, 0},
	"gemini-2.5-flash":      {0.30, 2.50, 0.03, 0},
	"gemini-2.5-flash-lite": {0.10, 0.40, 0.01, 0},
	"gemini-2.0-flash":      {0.10, 0.40, 0.025, 0},
}

var (
	dateSuffix   = regexp.MustCompile(`-(20\d{6}|20\d\d-\d\d-\d\d)$`)
	vendorPrefix = regexp.MustCompile(`^(anthropic|openai|google|models|vertex_ai|gemini)/`)
)

// NormalizeModel maps a model id as transcripts record it onto the price
// table's key: lower case, without a vendor prefix, a date snapshot suffix
// or a context-window tag ("claude-sonnet-4-5-20250929[1m]" →
// "claude-sonnet-4-5").
func NormalizeModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.IndexByte(m, '['); i > 0 {
		m = m[:i]
	}
	m = vendorPrefix.ReplaceAllString(m, "")
	m = strings.TrimSuffix(m, "-latest")
	m = dateSuffix.ReplaceAllString(m, "")
	return m
}

// PriceFor returns the table price of model.
func PriceFor(model string) (Price, bool) {
	p, ok := prices[NormalizeModel(model)]
	return p, ok
}

// Cost prices u for model; ok is false when the model is not in the table.
func Cost(model string, u transcript.Usage) (usd float64, ok bool) {
	p, ok := PriceFor(model)
	if !ok {
		return 0, false
	}
	// Reasoning tokens are already part of Output.
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6, true
}
