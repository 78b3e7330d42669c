package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mnemodb/mnemo"
)

// sqlBuilder writes a statement and collects its parameters: every value
// and field name of a filter becomes a bound parameter, never SQL text.
type sqlBuilder struct {
	sb   strings.Builder
	args []any
}

// arg adds a parameter and returns its placeholder.
func (b *sqlBuilder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

func (b *sqlBuilder) write(parts ...string) {
	for _, p := range parts {
		b.sb.WriteString(p)
	}
}

func (b *sqlBuilder) String() string { return b.sb.String() }

// maxParams is the most parameters one PostgreSQL statement takes.
const maxParams = 65535

// checkParams refuses a statement with more parameters than PostgreSQL
// takes: a filter with tens of thousands of values, which the engine
// answers, is mnemo.ErrBadFilter wrapping ErrUnsupported here, at once
// rather than as a failed send.
func checkParams(args []any) error {
	if len(args) > maxParams {
		return fmt.Errorf("%w: %w: the query needs %d parameters (its filter's fields and values among them), PostgreSQL takes at most %d in one statement",
			mnemo.ErrBadFilter, ErrUnsupported, len(args), maxParams)
	}
	return nil
}

// filterSQL writes the condition that f admits, over the jsonb column
// col, with the engine's semantics (see mnemo.FilterNode). Every leaf is
// true or false, never NULL, so that NOT keeps its meaning.
func filterSQL(b *sqlBuilder, col string, f *mnemo.Filter) {
	n, ok := f.Tree()
	if !ok {
		b.write("true")
		return
	}
	nodeSQL(b, col, n)
}

func nodeSQL(b *sqlBuilder, col string, n mnemo.FilterNode) {
	switch n.Op {
	case mnemo.FilterAnd, mnemo.FilterOr:
		sep := " AND "
		if n.Op == mnemo.FilterOr {
			sep = " OR "
		}
		b.write("(")
		for i, k := range n.Children {
			if i > 0 {
				b.write(sep)
			}
			nodeSQL(b, col, k)
		}
		b.write(")")
	case mnemo.FilterEq:
		eqSQL(b, col, n.Field, []any{n.Value})
	case mnemo.FilterNe:
		b.write("NOT ")
		eqSQL(b, col, n.Field, []any{n.Value})
	case mnemo.FilterIn:
		eqSQL(b, col, n.Field, n.Values)
	case mnemo.FilterNin:
		b.write("NOT ")
		eqSQL(b, col, n.Field, n.Values)
	case mnemo.FilterGt, mnemo.FilterGte, mnemo.FilterLt, mnemo.FilterLte:
		cmpSQL(b, col, n)
	case mnemo.FilterExists:
		if n.Value != true {
			b.write("NOT ")
		}
		b.write("coalesce(jsonb_exists(", col, ", ", b.arg(n.Field), "::text), false)")
	default:
		// Tree returns only the operators above; a new one must be
		// translated before it is used.
		panic("postgres: untranslated filter operator " + string(n.Op))
	}
}

// eqSQL writes "the field holds a scalar equal to one of vals": strings,
// booleans and null by type and text, numbers by type and float8 value
// (as the engine compares float64s). The condition is never NULL.
func eqSQL(b *sqlBuilder, col, field string, vals []any) {
	if len(vals) == 0 {
		b.write("false") // an empty $in
		return
	}
	var strs, bools []string
	var nums []float64
	null := false
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			strs = append(strs, x)
		case bool:
			bools = append(bools, strconv.FormatBool(x))
		case float64:
			nums = append(nums, x)
		case nil:
			null = true
		}
	}
	f := b.arg(field) + "::text"
	var parts []string
	if len(strs) > 0 {
		parts = append(parts, "(jsonb_typeof("+col+" -> "+f+") = 'string' AND ("+col+" ->> "+f+") = ANY("+b.arg(strs)+"::text[]))")
	}
	if len(bools) > 0 {
		parts = append(parts, "(jsonb_typeof("+col+" -> "+f+") = 'boolean' AND ("+col+" ->> "+f+") = ANY("+b.arg(bools)+"::text[]))")
	}
	if len(nums) > 0 {
		parts = append(parts, "(CASE WHEN jsonb_typeof("+col+" -> "+f+") = 'number' THEN ("+col+" ->> "+f+")::float8 = ANY("+b.arg(nums)+"::float8[]) ELSE false END)")
	}
	if null {
		parts = append(parts, "(jsonb_typeof("+col+" -> "+f+") = 'null')")
	}
	b.write("coalesce((", strings.Join(parts, " OR "), "), false)")
}

// cmpSQL writes an ordering comparison: numbers as float8, strings
// byte-wise (COLLATE "C"), false for a field of another type.
func cmpSQL(b *sqlBuilder, col string, n mnemo.FilterNode) {
	op := map[mnemo.FilterOp]string{mnemo.FilterGt: ">", mnemo.FilterGte: ">=", mnemo.FilterLt: "<", mnemo.FilterLte: "<="}[n.Op]
	f := b.arg(n.Field) + "::text"
	switch v := n.Value.(type) {
	case float64:
		b.write("coalesce(CASE WHEN jsonb_typeof(", col, " -> ", f, ") = 'number' THEN (", col, " ->> ", f, ")::float8 ", op, " ", b.arg(v), "::float8 ELSE false END, false)")
	case string:
		b.write("coalesce(jsonb_typeof(", col, " -> ", f, ") = 'string' AND (", col, " ->> ", f, ") COLLATE \"C\" ", op, " ", b.arg(v), "::text COLLATE \"C\", false)")
	default:
		b.write("false") // the parser admits only numbers and strings here
	}
}
