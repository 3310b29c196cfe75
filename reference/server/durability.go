package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/idemlint/idemlint/reference"
)

// DurabilityReporter is a store that can tell whether its server's
// settings let records vanish early (redisstore, pgstore).
type DurabilityReporter interface {
	Durability(context.Context) (warnings []string, read bool, err error)
}

// durabilityTimeout bounds reading the store's settings at start.
const durabilityTimeout = 10 * time.Second

// StoreWarnings logs, and returns for the demo's /_health, each way the
// store's settings let a record vanish, so that its key would run again;
// it logs too when the settings cannot be read.
func StoreWarnings(ctx context.Context, store reference.Store, logger *slog.Logger) []string {
	d, ok := store.(DurabilityReporter)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, durabilityTimeout)
	defer cancel()
	warnings, read, err := d.Durability(ctx)
	switch {
	case err != nil:
		logger.Warn("idempotency store: cannot read its persistence and eviction settings", "error", err)
	case !read:
		logger.Warn("idempotency store: the server does not let its persistence and eviction settings be read; at-most-once needs appendonly yes, appendfsync always and maxmemory-policy noeviction")
	}
	for _, w := range warnings {
		logger.Warn("idempotency store: records can be lost", "warning", w)
	}
	return warnings
}
