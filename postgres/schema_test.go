package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

// openSchema opens a Store on dsn, reporting a panic as an error.
func openSchema(ctx context.Context, dsn string) (s *postgres.Store, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("Open panicked: %v", p)
		}
	}()
	return postgres.Open(ctx, dsn, nil)
}

// schemaRows returns the versions mnemo_schema holds ("[1]"), or "absent"
// when there is no such table.
func schemaRows(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	// The test's own schema, not the search path, which goes on to
	// public: a mnemo_schema there (from an Open of the bare DSN) is not
	// this test's.
	var schema string
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT current_schema(), to_regclass(quote_ident(current_schema()) || '.mnemo_schema') IS NOT NULL`).Scan(&schema, &exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		return "absent"
	}
	rows, err := conn.Query(ctx, `SELECT version FROM `+pgx.Identifier{schema, "mnemo_schema"}.Sanitize()+` ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(v)
}

// TestSchemaCheck: Open creates the schema in an empty database and opens
// it again; any other state of mnemo_schema than one row of a known
// version is ErrSchema naming what it found, never a panic or a raw server
// error, and a refused Open changes nothing.
func TestSchemaCheck(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup []string // run after a first Open created the schema; nil: an empty database
		want  []string // what the error names; nil: Open succeeds
		after string   // mnemo_schema's rows after Open (see schemaRows)
	}{
		{"empty database", nil, nil, fmt.Sprint([]int{postgres.SchemaVersion})},
		{"current version", []string{}, nil, fmt.Sprint([]int{postgres.SchemaVersion})},
		{"negative version", []string{`UPDATE mnemo_schema SET version = -1`}, []string{"-1"}, "[-1]"},
		{"version zero", []string{`UPDATE mnemo_schema SET version = 0`}, []string{"0"}, "[0]"},
		{"newer version", []string{fmt.Sprintf(`UPDATE mnemo_schema SET version = %d`, postgres.SchemaVersion+1)}, []string{fmt.Sprint(postgres.SchemaVersion + 1)}, fmt.Sprint([]int{postgres.SchemaVersion + 1})},
		{"no version row", []string{`DELETE FROM mnemo_schema`}, []string{"no version", "mnemo_collections"}, "[]"},
		{"no version table", []string{`DROP TABLE mnemo_schema`}, []string{"no version", "mnemo_collections"}, "absent"},
		{"two rows, known first", []string{fmt.Sprintf(`INSERT INTO mnemo_schema VALUES (%d)`, postgres.SchemaVersion+1)}, []string{"2 rows", fmt.Sprint(postgres.SchemaVersion + 1)}, fmt.Sprint([]int{postgres.SchemaVersion, postgres.SchemaVersion + 1})},
		{"two rows, newer first", []string{
			`DELETE FROM mnemo_schema`,
			fmt.Sprintf(`INSERT INTO mnemo_schema VALUES (%d)`, postgres.SchemaVersion+1),
			fmt.Sprintf(`INSERT INTO mnemo_schema VALUES (%d)`, postgres.SchemaVersion),
		}, []string{"2 rows", fmt.Sprint(postgres.SchemaVersion + 1)}, fmt.Sprint([]int{postgres.SchemaVersion, postgres.SchemaVersion + 1})},
		{"two equal rows", []string{fmt.Sprintf(`INSERT INTO mnemo_schema VALUES (%d)`, postgres.SchemaVersion)}, []string{"2 rows"}, fmt.Sprint([]int{postgres.SchemaVersion, postgres.SchemaVersion})},
		{"no catalog", []string{`DROP TABLE mnemo_collections CASCADE`}, []string{"mnemo_collections"}, fmt.Sprint([]int{postgres.SchemaVersion})},
		{"empty version table alone", []string{`DROP TABLE mnemo_positions`, `DROP TABLE mnemo_collections`, `DELETE FROM mnemo_schema`}, nil, fmt.Sprint([]int{postgres.SchemaVersion})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := freshDSN(t)
			conn := setupSchema(t, dsn, tt.setup)
			s, err := openSchema(ctx, dsn)
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("Open: %v", err)
			case tt.want == nil:
				defer s.Close()
				if _, err := s.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2}); err != nil {
					t.Fatalf("CreateCollection after Open: %v", err)
				}
			case !errors.Is(err, postgres.ErrSchema):
				t.Fatalf("Open: %v, want ErrSchema", err)
			default:
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Open: %v, want it to name %q", err, w)
					}
				}
			}
			if got := schemaRows(t, conn); got != tt.after {
				t.Errorf("mnemo_schema holds %v after Open, want %v", got, tt.after)
			}
		})
	}
}
