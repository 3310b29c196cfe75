package pgstore

import (
	"cmp"
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// OpenConfig is Open on a parsed configuration, for the tests that dial
// through a connection they break.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config, o Options) (*Store, error) {
	return openConfig(ctx, cfg, cmp.Or(o.Table, DefaultTable))
}
