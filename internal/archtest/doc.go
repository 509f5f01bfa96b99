// Package archtest holds the tests that keep the module's shape: every
// package says what it owns, imports flow down, and provider knowledge stays
// in the provider packages. It has no code of its own.
package archtest
