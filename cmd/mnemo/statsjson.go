package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// statsJSON is what stats --json prints: one JSON object, whose field
// names are stable (docs/observability.md lists them). Fields only the
// embedded engine knows are absent for a server.
type statsJSON struct {
	// Backend is "engine" (a database directory) or "postgres".
	Backend string `json:"backend"`
	// The engine's: the identity file's id, how long Open took, and the
	// bytes of the files in the database directory.
	DatabaseID  string                `json:"database_id,omitempty"`
	OpenSeconds *float64              `json:"open_seconds,omitempty"`
	DiskBytes   *int64                `json:"disk_bytes,omitempty"`
	Collections []collectionStatsJSON `json:"collections"`
}

// collectionStatsJSON describes one collection (see statsJSON).
type collectionStatsJSON struct {
	Name      string `json:"name"`
	Records   int    `json:"records"`
	Dimension int    `json:"dimension"`
	Metric    string `json:"metric"`
	Index     string `json:"index"`
	*EngineCollectionJSON
}

// EngineCollectionJSON is what the engine adds to a collection's stats
// (engine.CollectionStats).
type EngineCollectionJSON struct {
	IndexBytes        int64      `json:"index_bytes"`
	IndexTombstones   int        `json:"index_tombstones"`
	LogRecords        int        `json:"log_records"`
	LastCheckpointSeq uint64     `json:"last_checkpoint_seq"`
	LastCheckpoint    *time.Time `json:"last_checkpoint,omitempty"`
	OpenedBy          string     `json:"opened_by"`
	RebuildReason     string     `json:"rebuild_reason,omitempty"`
	ReplayedRecords   int        `json:"replayed_records"`
	OpenSeconds       float64    `json:"open_seconds"`
	Text              *textJSON  `json:"text,omitempty"`
}

// textJSON is a collection's full-text index (absent when disabled).
type textJSON struct {
	Terms    int    `json:"terms"`
	Postings int    `json:"postings"`
	Bytes    int64  `json:"bytes"`
	Rebuilt  int    `json:"rebuilt"`
	Damage   string `json:"damage,omitempty"`
}

// collectionJSON is the part every backend knows.
func collectionJSON(name string, records int, cfg mnemo.CollectionConfig) collectionStatsJSON {
	return collectionStatsJSON{Name: name, Records: records, Dimension: cfg.Dimension, Metric: cfg.Metric.String(), Index: string(cfg.Index)}
}

// engineStatsJSON converts the engine's stats of a database whose files
// hold disk bytes.
func engineStatsJSON(st engine.Stats, disk int64) statsJSON {
	open := st.OpenDuration.Seconds()
	out := statsJSON{Backend: "engine", DatabaseID: st.DatabaseID, OpenSeconds: &open, DiskBytes: &disk, Collections: []collectionStatsJSON{}}
	for _, c := range st.Collections {
		j := collectionJSON(c.Name, c.Records, c.Config)
		e := &EngineCollectionJSON{
			IndexBytes: c.IndexBytes, IndexTombstones: c.IndexTombstones, LogRecords: c.LogRecords,
			LastCheckpointSeq: c.LastCheckpointSeq,
			OpenedBy:          c.OpenedBy, RebuildReason: c.RebuildReason, ReplayedRecords: c.ReplayedRecords,
			OpenSeconds: c.OpenDuration.Seconds(),
		}
		if !c.LastCheckpoint.IsZero() {
			t := c.LastCheckpoint.UTC()
			e.LastCheckpoint = &t
		}
		if !c.Config.Text.Disabled {
			e.Text = &textJSON{Terms: c.TextTerms, Postings: c.TextPostings, Bytes: c.TextBytes, Rebuilt: c.TextRebuilt, Damage: c.TextDamage}
		}
		j.EngineCollectionJSON = e
		out.Collections = append(out.Collections, j)
	}
	return out
}

func writeStatsJSON(out io.Writer, st statsJSON) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}

// diskBytes returns the total size of the regular files under dir.
func diskBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
