// Package providertest is the shared test kit of the provider packages
// (internal/provider/<name>): the checks every transcript source, turn
// reader and hook mapping must pass, written once and run by each
// provider's tests. Only tests import it.
package providertest
