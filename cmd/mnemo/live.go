package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mnemodb/mnemo/engine"
)

// dialLive answers openErr, the error of opening the database in dir,
// when another process holds it: through that process's live access
// (see engine.DialLive), so that the read commands and backup work on a
// database in use. Any other error is returned as it is; so is a locked
// database without live access, with the reason added.
func dialLive(ctx context.Context, dir string, openErr error) (*engine.Live, error) {
	if !errors.Is(openErr, engine.ErrLocked) {
		return nil, openErr
	}
	l, err := engine.DialLive(ctx, dir)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w (%v)", openErr, err)
	}
	return l, nil
}
