package muse

import (
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

// Provider is Muse: transcripts only, Muster does not launch it.
type Provider struct{}

var _ provider.Transcripts = Provider{}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Transcripts implements provider.Transcripts.
func (Provider) Transcripts() transcript.Source { return New() }
