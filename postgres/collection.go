package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
	"github.com/pgvector/pgvector-go"
)

// Collection is one collection of a Store: a table of records with an
// HNSW index over their vectors, beside its full-text index (postings
// kept on write; see the package doc). It implements mnemo.Collection and
// mnemo.Sequencer (Reserve, Advance) and is
// safe for concurrent use by multiple goroutines. It stays valid until
// the Store is closed or the collection dropped (by any process): then
// its calls fail with mnemo.ErrClosed or mnemo.ErrCollectionNotFound.
type Collection struct {
	s     *Store
	name  string
	id    int64
	table string
	cfg   mnemo.CollectionConfig
}

func (s *Store) newCollection(name string, id int64, cfg mnemo.CollectionConfig) *Collection {
	return &Collection{s: s, name: name, id: id, table: tableName(id), cfg: cfg.WithDefaults()}
}

// Name returns the collection's name.
func (c *Collection) Name() string { return c.name }

// Config returns the collection's config, defaults applied.
func (c *Collection) Config() mnemo.CollectionConfig { return c.cfg }

// row is a record as written to the table.
type row struct {
	id     string
	vec    pgvector.Vector
	text   string
	meta   *string // JSON, nil for none
	terms  []string
	freqs  []int32
	length int32
}

// Upsert inserts or replaces records in one transaction: either every
// record is committed or, when it returns an error, none is. Records with
// an empty ID get a new UUID v4 (assigned before the first attempt, so a
// retry after a lost connection writes the same records). The records are
// checked as the engine checks them; the caller may reuse them.
func (c *Collection) Upsert(ctx context.Context, records ...mnemo.Record) ([]string, error) {
	t := telemetry.Start(c.s.rec)
	ids, size, err := c.upsert(ctx, records, nil)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpUpsert, Collection: c.name, Records: len(records), Bytes: int64(size), Err: err})
	}
	return ids, err
}

var _ mnemo.Conditional = (*Collection)(nil)

// UpsertIf implements mnemo.Conditional: in the write's transaction, with
// the records' IDs locked, it reads what they hold and writes those cond
// admits.
func (c *Collection) UpsertIf(ctx context.Context, cond func(exists bool, stored map[string]any) bool, records ...mnemo.Record) ([]string, error) {
	if err := mnemo.CheckUpsertIf(records); err != nil {
		return nil, err
	}
	if cond == nil {
		cond = func(bool, map[string]any) bool { return true }
	}
	t := telemetry.Start(c.s.rec)
	ids, size, err := c.upsert(ctx, records, cond)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpUpsert, Collection: c.name, Records: len(ids), Bytes: int64(size), Err: err})
	}
	return ids, err
}

// DeleteIf implements mnemo.Conditional: it deletes those of ids whose
// stored metadata cond admits, with the IDs locked.
func (c *Collection) DeleteIf(ctx context.Context, cond func(stored map[string]any) bool, ids ...string) (int, error) {
	if cond == nil {
		cond = func(map[string]any) bool { return true }
	}
	t := telemetry.Start(c.s.rec)
	n, err := c.delete(ctx, ids, cond)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpDelete, Collection: c.name, Records: n, Err: err})
	}
	return n, err
}

// stored locks ids (lockIDs) in tx and returns the metadata of those that
// exist.
func (c *Collection) stored(ctx context.Context, tx pgx.Tx, ids []string) (map[string]map[string]any, error) {
	var b pgx.Batch
	b.Queue(lockIDs(c.id), ids)
	b.Queue(`SELECT id, metadata FROM `+c.table+` WHERE id = ANY($1)`, ids)
	br := tx.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	var id string
	var meta []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &meta}, func() error {
		m, err := decodeMetadata(id, meta)
		out[id] = m
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, br.Close()
}

// upsert is Upsert; it also returns the records' size (mnemo.RecordBytes).
// With cond, only the records it admits are written (UpsertIf).
func (c *Collection) upsert(ctx context.Context, records []mnemo.Record, cond func(bool, map[string]any) bool) ([]string, int, error) {
	if err := c.s.enter(ctx); err != nil {
		return nil, 0, err
	}
	if len(records) == 0 {
		return nil, 0, nil
	}
	ids := make([]string, len(records))
	rows := make([]row, len(records))
	seen := make(map[string]bool, len(records))
	size := 0
	for i, r := range records {
		meta, err := mnemo.CheckRecord(c.cfg, i, r)
		if err != nil {
			return nil, 0, err
		}
		if size += mnemo.RecordBytes(r, meta); size > mnemo.MaxBatchBytes {
			return nil, 0, mnemo.BatchTooLarge(len(records), i)
		}
		if rows[i], err = c.row(i, r, meta); err != nil { // before an ID is assigned, which errors must not name
			return nil, 0, err
		}
		if r.ID == "" {
			r.ID = uuid.NewString()
			rows[i].id = r.ID
		}
		ids[i] = r.ID
		if seen[r.ID] {
			return nil, 0, fmt.Errorf("%w: id %q appears twice in one batch", mnemo.ErrInvalidRecord, r.ID)
		}
		seen[r.ID] = true
	}
	sql := `INSERT INTO ` + c.table + ` (id, embedding, content, metadata, terms, freqs, text_len)
		VALUES ($1, $2, $3, $4::text::jsonb, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding, content = EXCLUDED.content,
			metadata = EXCLUDED.metadata, terms = EXCLUDED.terms, freqs = EXCLUDED.freqs, text_len = EXCLUDED.text_len`
	written := ids
	err := c.s.do(ctx, func(ctx context.Context) error {
		return pgx.BeginTxFunc(ctx, c.s.pool, c.writeTx(), func(tx pgx.Tx) error {
			rows, ids := rows, ids
			if cond != nil {
				have, err := c.stored(ctx, tx, ids)
				if err != nil {
					return err
				}
				var kr []row
				ki := []string{}
				for i, id := range ids {
					m, ok := have[id]
					if cond(ok, m) {
						kr, ki = append(kr, rows[i]), append(ki, id)
					}
				}
				rows, ids, written = kr, ki, ki
				if len(ids) == 0 {
					return nil
				}
			}
			old, err := c.lockOld(ctx, tx, ids, `SELECT id, terms, text_len FROM `+c.table+` WHERE id = ANY($1)`)
			if err != nil {
				return err
			}
			tc := newTextChange()
			var b pgx.Batch
			for _, r := range rows {
				b.Queue(sql, r.id, r.vec, r.text, r.meta, r.terms, r.freqs, r.length)
				if o, ok := old[r.id]; ok {
					tc.change(r, &o)
				} else {
					tc.change(r, nil)
				}
			}
			tc.queue(&b, c.id)
			return tx.SendBatch(ctx, &b).Close()
		})
	})
	if err != nil {
		return nil, 0, err
	}
	return written, size, nil
}

// writeTx begins a write's transaction with the table's write lock, in
// the same round trip, before any statement reads the table: a write that
// waits for ReplaceCollection (which holds EXCLUSIVE) then holds no lock
// on the table that its DROP would wait for. (Preparing a statement that
// reads the table takes ACCESS SHARE, so the lock cannot wait in a batch
// behind such a statement.)
func (c *Collection) writeTx() pgx.TxOptions {
	return pgx.TxOptions{BeginQuery: `BEGIN; LOCK TABLE ` + c.table + ` IN ROW EXCLUSIVE MODE`}
}

// lockOld takes the write locks of the records with the given IDs (see
// lockIDs) in tx, then runs sql, which reads (or deletes) them returning
// (id, terms, text_len), and returns what they held in the full-text
// index by ID.
func (c *Collection) lockOld(ctx context.Context, tx pgx.Tx, ids []string, sql string) (map[string]oldText, error) {
	var b pgx.Batch
	b.Queue(lockIDs(c.id), ids)
	b.Queue(sql, ids)
	br := tx.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	old, err := readOld(br)
	if err != nil {
		return nil, err
	}
	return old, br.Close()
}

// row prepares record i (checked, with its metadata JSON) for the table;
// an empty r.ID is named in errors by its position in the batch.
func (c *Collection) row(i int, r mnemo.Record, meta []byte) (row, error) {
	if strings.ContainsRune(r.Content, 0) || strings.Contains(string(meta), `\u0000`) && hasNUL(meta) {
		name := fmt.Sprintf("record %q", r.ID)
		if r.ID == "" {
			name = fmt.Sprintf("record %d of the batch (no id given)", i)
		}
		return row{}, fmt.Errorf("%w: %w: %s: PostgreSQL text cannot hold U+0000", mnemo.ErrInvalidRecord, ErrUnsupported, name)
	}
	out := row{id: r.ID, vec: pgvector.NewVector(r.Vector), text: r.Content}
	var stored map[string]any
	if meta != nil {
		js := string(meta)
		out.meta = &js
		if len(c.cfg.Text.Fields) > 0 {
			if err := json.Unmarshal(meta, &stored); err != nil {
				return row{}, fmt.Errorf("%w: record %d: metadata: %v", mnemo.ErrInvalidRecord, i, err)
			}
		}
	}
	terms, freqs, length := mnemo.TextTerms(c.cfg, r.Content, stored)
	out.terms, out.length = terms, int32(length)
	if out.terms == nil {
		out.terms = []string{}
	}
	out.freqs = make([]int32, len(freqs))
	for j, f := range freqs {
		out.freqs[j] = int32(f)
	}
	return out, nil
}

// storable reports whether PostgreSQL text can hold s: valid UTF-8
// without U+0000. Names and IDs that fail it cannot have been stored.
func storable(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// hasNUL reports whether JSON text holds an escaped U+0000 in a string or
// key (a \u0000 escape not itself escaped).
func hasNUL(js []byte) bool {
	for i := 0; i+6 <= len(js); i++ {
		if js[i] != '\\' {
			continue
		}
		if string(js[i:i+6]) == `\u0000` {
			return true
		}
		i++ // skip the escaped character
	}
	return false
}

// Delete removes the records with the given IDs in one transaction and
// returns how many existed. Absent IDs are not an error. When a lost
// connection made it retry after the first attempt committed, the count
// is of what the retry found.
func (c *Collection) Delete(ctx context.Context, ids ...string) (int, error) {
	t := telemetry.Start(c.s.rec)
	n, err := c.delete(ctx, ids, nil)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpDelete, Collection: c.name, Records: n, Err: err})
	}
	return n, err
}

func (c *Collection) delete(ctx context.Context, ids []string, cond func(map[string]any) bool) (int, error) {
	if err := c.s.enter(ctx); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := mnemo.CheckID(id); err != nil {
			return 0, err
		}
	}
	// An ID that PostgreSQL text cannot hold was never stored.
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !storable(id) })
	if len(ids) == 0 {
		return 0, nil
	}
	var n int
	err := c.s.do(ctx, func(ctx context.Context) error {
		return pgx.BeginTxFunc(ctx, c.s.pool, c.writeTx(), func(tx pgx.Tx) error {
			ids := ids
			if cond != nil {
				have, err := c.stored(ctx, tx, ids)
				if err != nil {
					return err
				}
				ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
					m, ok := have[id]
					return !ok || !cond(m)
				})
				if len(ids) == 0 {
					n = 0
					return nil
				}
			}
			old, err := c.lockOld(ctx, tx, ids, `DELETE FROM `+c.table+` WHERE id = ANY($1) RETURNING id, terms, text_len`)
			if err != nil {
				return err
			}
			n = len(old)
			tc := newTextChange()
			for id, o := range old {
				tc.drop(id, o)
			}
			var b pgx.Batch
			tc.queue(&b, c.id)
			return tx.SendBatch(ctx, &b).Close()
		})
	})
	return n, err
}

// Get returns the record with the given ID and whether it exists.
func (c *Collection) Get(ctx context.Context, id string) (mnemo.Record, bool, error) {
	if err := c.s.enter(ctx); err != nil {
		return mnemo.Record{}, false, err
	}
	if err := mnemo.CheckID(id); err != nil {
		return mnemo.Record{}, false, err
	}
	if !storable(id) { // never stored: Upsert refuses it
		return mnemo.Record{}, false, nil
	}
	var rec mnemo.Record
	found := false
	err := c.s.do(ctx, func(ctx context.Context) error {
		rows, err := c.s.reader().Query(ctx, `SELECT id, embedding, content, metadata FROM `+c.table+` WHERE id = $1`, id)
		if err != nil {
			return err
		}
		recs, err := collectRecords(rows)
		if err != nil {
			return err
		}
		found = len(recs) == 1
		if found {
			rec = recs[0]
		}
		return nil
	})
	return rec, found, err
}

// Scan returns up to limit records in ascending ID order (byte-wise),
// starting after the ID after ("" starts at the beginning), and the ID to
// pass as after to continue ("" when there is nothing more). Each page is
// one consistent snapshot; pages are not a snapshot together.
func (c *Collection) Scan(ctx context.Context, after string, limit int) ([]mnemo.Record, string, error) {
	if err := c.s.enter(ctx); err != nil {
		return nil, "", err
	}
	if limit <= 0 {
		return nil, "", fmt.Errorf("%w: limit %d, want > 0", mnemo.ErrBadQuery, limit)
	}
	// No collection holds more (see mnemo.MaxQueryK); limit+1 below must
	// not overflow.
	limit = min(limit, mnemo.MaxQueryK)
	// Byte order is the order of COLLATE "C" over UTF-8, and of bytea: an
	// after that text cannot hold is compared as bytes (an exact scan).
	where, arg := `id > $1`, any(after)
	if !storable(after) {
		where, arg = `convert_to(id, 'UTF8') > $1`, []byte(after)
	}
	var page []mnemo.Record
	err := c.s.do(ctx, func(ctx context.Context) error {
		rows, err := c.s.reader().Query(ctx, `SELECT id, embedding, content, metadata FROM `+c.table+` WHERE `+where+` ORDER BY id LIMIT $2`, arg, int64(limit)+1)
		if err != nil {
			return err
		}
		page, err = collectRecords(rows)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if len(page) > limit {
		return page[:limit], page[limit-1].ID, nil
	}
	return page, "", nil
}

// Count returns the number of records (an exact count: a scan of the
// table's visibility map and, where it is not all-visible, its pages).
func (c *Collection) Count(ctx context.Context) (int, error) {
	if err := c.s.enter(ctx); err != nil {
		return 0, err
	}
	var n int64
	err := c.s.do(ctx, func(ctx context.Context) error {
		return c.s.reader().QueryRow(ctx, `SELECT count(*) FROM `+c.table).Scan(&n)
	})
	return int(n), err
}

// collectRecords reads rows of (id, embedding, content, metadata).
func collectRecords(rows pgx.Rows) ([]mnemo.Record, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (mnemo.Record, error) {
		var rec mnemo.Record
		var vec pgvector.Vector
		var meta []byte
		if err := r.Scan(&rec.ID, &vec, &rec.Content, &meta); err != nil {
			return rec, err
		}
		rec.Vector = vec.Slice()
		var err error
		rec.Metadata, err = decodeMetadata(rec.ID, meta)
		return rec, err
	})
}

// decodeMetadata parses stored metadata as the engine does: numbers as
// float64, nil for none.
func decodeMetadata(id string, b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("postgres: record %q: metadata: %v", id, err)
	}
	return m, nil
}
