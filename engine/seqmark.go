package engine

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble keeps recent writes only in its log until it flushes them, and it
// cannot tell a log cut short or removed (by a tool, an operator or a
// failing disk) from one that simply ended: replay stops there and the
// writes after it are gone without a word. mnemo's own log gives each
// write a sequence number per collection, so a second witness of how far
// the log reached is enough to detect the loss. That witness is the
// sequence mark, a small file beside Pebble's:
//
//	+--------+---------+--------------------------------+---------+
//	| "MSEQ" | n (u32) | n x (collection id u32, seq u64) | crc32c |
//	+--------+---------+--------------------------------+---------+
//
// (little-endian; the checksum, Castagnoli, covers everything before
// it; a dropped collection keeps its entry with seq 2^64-1, so that a
// drop lost with the log is detected too). After every fsynced commit the collection's acknowledged sequence
// number is written there in place, without an fsync of its own: it is
// written after the commit, so it never runs ahead of what Pebble has on
// stable storage, and losing it to a crash only weakens the check. Open
// compares it with each collection's log: a log that ends before a
// sequence number that was acknowledged lost writes, and Open fails with
// a corruption error instead of serving the older state. A mark that is
// damaged or missing checks nothing and costs nothing; under NoSync the
// mark is not advanced (acknowledged writes may then be lost by design).

const seqMarkFile = "SEQMARK"

var seqMarkMagic = [4]byte{'M', 'S', 'E', 'Q'}

// seqMark is the in-memory copy of the mark and its open file.
type seqMark struct {
	// mu protects the following fields.
	mu   sync.Mutex
	f    vfs.File // nil when the file could not be opened
	seqs map[uint32]uint64
	buf  []byte
	err  error // the first write error, logged once
}

// readSeqMark reads the mark; ok is false when it is absent or damaged.
func readSeqMark(fs vfs.FS, path string) (map[uint32]uint64, bool) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil || len(b) < 12 || [4]byte(b[:4]) != seqMarkMagic {
		return nil, false
	}
	n := int(binary.LittleEndian.Uint32(b[4:8]))
	end := 8 + 12*n
	if n > (len(b)-12)/12 || crc32.Checksum(b[:end], castagnoli) != binary.LittleEndian.Uint32(b[end:end+4]) {
		return nil, false
	}
	seqs := make(map[uint32]uint64, n)
	for i := 8; i < end; i += 12 {
		seqs[binary.LittleEndian.Uint32(b[i:])] = binary.LittleEndian.Uint64(b[i+4:])
	}
	return seqs, true
}

// openSeqMark opens the mark for writing, starting from seqs.
func openSeqMark(fs vfs.FS, path string, seqs map[uint32]uint64) (*seqMark, error) {
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	if seqs == nil {
		seqs = map[uint32]uint64{}
	}
	m := &seqMark{f: f, seqs: seqs}
	return m, m.writeLocked()
}

// advance records that seq was acknowledged in collection cid.
func (m *seqMark) advance(cid uint32, seq uint64) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.seqs[cid]; ok && old >= seq {
		return nil
	}
	m.seqs[cid] = seq
	return m.writeLocked()
}

// dropped records that collection cid was dropped: from now on its
// presence at Open means the drop was lost. Collection ids are never
// reused, so the entry stays.
func (m *seqMark) dropped(cid uint32) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seqs[cid] = seqDropped
	return m.writeLocked()
}

// seqDropped marks a dropped collection in the sequence mark.
const seqDropped = ^uint64(0)

func (m *seqMark) writeLocked() error {
	if m.err != nil {
		return nil
	}
	ids := make([]uint32, 0, len(m.seqs))
	for id := range m.seqs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b := append(m.buf[:0], seqMarkMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint32(b, id)
		b = binary.LittleEndian.AppendUint64(b, m.seqs[id])
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	m.buf = b
	if _, err := m.f.WriteAt(b, 0); err != nil {
		m.err = err
		return fmt.Errorf("engine: write %s: %w", seqMarkFile, err)
	}
	return nil
}

func (m *seqMark) close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Close()
}

// checkSeqMark compares the mark read at Open with a collection's log.
func (db *DB) checkSeqMark(c *Collection) error {
	want, ok := db.markAtOpen[c.id]
	if want == seqDropped {
		return fmt.Errorf("%w: collection %q was dropped, and the drop was acknowledged, but it is back: "+
			"writes were lost from Pebble's log (a damaged, cut or removed .log file); restore from a backup",
			ErrCorrupt, c.Name())
	}
	if !ok || c.log.LastSeq() >= want {
		return nil
	}
	return fmt.Errorf("%w: collection %q: its log ends at sequence %d, but sequence %d was acknowledged: "+
		"writes were lost from Pebble's log (a damaged, cut or removed .log file); restore from a backup",
		ErrCorrupt, c.Name(), c.log.LastSeq(), want)
}

// checkLostCollections reports a collection the mark names whose creation
// was lost with the log: its id is not below the next free one. (One that
// is gone while its id is below it was dropped: a drop whose record in the
// mark a crash prevented.)
func (db *DB) checkLostCollections(next uint32) error {
	for cid := range db.markAtOpen {
		if cid >= next {
			return fmt.Errorf("%w: collection id %d was acknowledged but is missing: "+
				"writes were lost from Pebble's log; restore from a backup", ErrCorrupt, cid)
		}
	}
	return nil
}
