// Package memtest runs a memory adapter's tests on the backend that
// MNEMO_MEMORY_BACKEND names: "" or "engine" (the in-memory engine
// database, the default) or "postgres" (a new schema on the server
// MNEMO_PG_DSN names, for every Open("") a test makes). The adapters'
// TestMain functions call Main, so one suite of behaviours runs on both
// backends:
//
//	go test ./memory/...
//	MNEMO_MEMORY_BACKEND=postgres MNEMO_PG_DSN=postgres://... go test ./memory/...
package memtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/postgres"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

// Main runs m on the backend MNEMO_MEMORY_BACKEND names and returns the
// exit code.
func Main(m *testing.M) int {
	switch b := os.Getenv("MNEMO_MEMORY_BACKEND"); b {
	case "", "engine":
		return m.Run()
	case "postgres":
		dsn := os.Getenv("MNEMO_PG_DSN")
		if dsn == "" {
			fmt.Fprintln(os.Stderr, "MNEMO_MEMORY_BACKEND=postgres needs MNEMO_PG_DSN")
			return 2
		}
		schemas := pgtest.NewSchemas(dsn)
		textvec.InMemoryStore = func(obs textvec.Observe) (mnemo.Store, error) {
			ctx := context.Background()
			dsn, err := schemas.New(ctx)
			if err != nil {
				return nil, err
			}
			return postgres.Open(ctx, dsn, &postgres.Options{Logger: obs.Logger, Metrics: obs.Metrics})
		}
		code := m.Run()
		if err := schemas.Drop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "drop test schemas:", err)
		}
		return code
	default:
		fmt.Fprintf(os.Stderr, "MNEMO_MEMORY_BACKEND=%q: want engine or postgres\n", b)
		return 2
	}
}
