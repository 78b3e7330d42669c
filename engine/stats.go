package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"time"

	"github.com/mnemodb/mnemo/index"
)

// Stats describes a database. It is a snapshot the caller owns: nothing
// else refers to it, and later changes to the database do not show in
// it.
type Stats struct {
	// OpenDuration is how long Open took, all collections included.
	OpenDuration time.Duration
	// DatabaseID is the id in the database's identity file (empty when a
	// database opened read-only had none).
	DatabaseID string
	// ReadOnly reports a database opened for reading only: with
	// Options.ReadOnly, or because its disk had less free space than
	// Options.MinFreeSpace.
	ReadOnly    bool
	Collections []CollectionStats
}

// CollectionStats describes one collection, as a snapshot the caller owns
// (see Stats).
type CollectionStats struct {
	Name   string
	Config mnemo.CollectionConfig
	// Records is the number of stored records.
	Records int
	// IndexBytes estimates the index's memory; IndexTombstones counts
	// deleted vectors not yet compacted away.
	IndexBytes      int64
	IndexTombstones int
	// LogRecords is the number of log records after the last checkpoint.
	LogRecords int
	// LastCheckpointSeq and LastCheckpoint describe the newest checkpoint
	// (zero if none).
	LastCheckpointSeq uint64
	LastCheckpoint    time.Time
	// OpenedBy says how Open brought the index up: "empty",
	// "checkpoint+replay" or "rebuild"; RebuildReason says why a rebuild
	// was needed (a missing, stale or damaged checkpoint, a damaged log).
	OpenedBy        string
	RebuildReason   string
	ReplayedRecords int
	OpenDuration    time.Duration
	// The full-text index (zero when disabled): distinct terms, postings
	// (stale ones included, until their list is compacted), its
	// estimated memory, and, from the last Open, how many records' text
	// entries had to be made from their contents (TextRebuilt: a
	// database from before the full-text index, or damage) and a note of
	// any damaged entries found (TextDamage).
	TextTerms, TextPostings int
	TextBytes               int64
	TextRebuilt             int
	TextDamage              string
}

// Stats returns the database's statistics. It counts the log of every
// collection, O(log records).
func (db *DB) Stats(ctx context.Context) (Stats, error) {
	done, err := db.enter()
	if err != nil {
		return Stats{}, err
	}
	defer done()
	s := Stats{OpenDuration: db.openTook, DatabaseID: db.id.ID, ReadOnly: db.readOnly != nil}
	for _, name := range db.Collections() {
		// Not db.Collection: a nested enter could deadlock against Close.
		db.mu.Lock()
		c, ok := db.collections[name]
		db.mu.Unlock()
		if !ok {
			continue // dropped meanwhile
		}
		if err := ctx.Err(); err != nil {
			return Stats{}, err
		}
		var cs CollectionStats
		if err := guard(func() (err error) { cs, err = c.stats(); return err }); err != nil {
			return Stats{}, err
		}
		s.Collections = append(s.Collections, cs)
	}
	return s, nil
}

// Stats returns the collection's statistics.
func (c *Collection) Stats(ctx context.Context) (cs CollectionStats, err error) {
	done, err := c.enter()
	if err != nil {
		return CollectionStats{}, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return CollectionStats{}, err
	}
	err = guard(func() (err error) { cs, err = c.stats(); return err })
	return cs, err
}

func (c *Collection) stats() (CollectionStats, error) {
	c.mu.RLock()
	info := c.loadInfo
	records := len(c.ids)
	c.mu.RUnlock()
	n, err := c.log.Count(info.lastCheckpoint.Seq + 1)
	if err != nil {
		return CollectionStats{}, err
	}
	cs := CollectionStats{
		Name: c.Name(), Config: c.cfg, Records: records,
		IndexBytes: c.idx.MemoryBytes(), LogRecords: n,
		LastCheckpointSeq: info.lastCheckpoint.Seq, LastCheckpoint: info.lastCheckpoint.Time,
		OpenedBy: info.how, RebuildReason: info.reason, ReplayedRecords: info.replayed, OpenDuration: info.took,
	}
	if x, ok := c.idx.(index.Compacter); ok {
		cs.IndexTombstones = x.Deleted()
	}
	if c.text != nil {
		c.mu.RLock()
		st := c.text.Stats()
		c.mu.RUnlock()
		cs.TextTerms, cs.TextPostings, cs.TextBytes = st.Terms, st.Postings, st.Bytes
		cs.TextRebuilt, cs.TextDamage = info.textRebuilt, info.textDamage
	}
	return cs, nil
}
