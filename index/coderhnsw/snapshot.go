//go:build !windows

package coderhnsw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/mnemodb/mnemo/index"
)

// The snapshot format is drawn in the package doc (doc.go).

var magic = [8]byte{'M', 'N', 'E', 'M', 'O', 'C', 'D', 'R'}

const (
	version    = 1
	headerSize = 8 + 4 + 4 + 8 + 4 + 4
	maxCount   = math.MaxUint32 - 1 // package index's bound on a record snapshot
	maxEf      = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes a snapshot of the index to w (format in the package
// doc): the
// keys and vectors in key order, and the parameters. coder/hnsw's own
// Export is not used: after deletions v0.6.1 exports neighbour references
// to removed nodes, and a graph imported from such an export panics in
// Search. Read therefore rebuilds the graph.
func (c *Index) WriteTo(w io.Writer) (int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]uint64, 0, len(c.keys))
	for k := range c.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys) // rebuilt in key order, so a reload is deterministic

	sw := &sumWriter{w: bufio.NewWriterSize(w, 1<<16), crc: crc32.New(castagnoli)}
	b := make([]byte, 0, max(headerSize, 8+4*c.dim))
	b = append(b, magic[:]...)
	b = append(b, version, 0, byte(c.metric), 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(c.dim))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(keys)))
	b = binary.LittleEndian.AppendUint32(b, uint32(c.g.M))
	b = binary.LittleEndian.AppendUint32(b, uint32(c.efSearch))
	sw.write(b)
	sw.writeSum()
	for _, k := range keys {
		v, _ := c.g.Lookup(c.keys[k])
		b = binary.LittleEndian.AppendUint64(b[:0], k)
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		sw.write(b)
	}
	sw.writeSum()
	return sw.n, sw.w.Flush()
}

// sumWriter counts and checksums what passes through it.
type sumWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
}

func (sw *sumWriter) write(p []byte) {
	sw.w.Write(p) // errors surface at Flush
	sw.crc.Write(p)
	sw.n += int64(len(p))
}

// writeSum writes the checksum of everything written so far; a later
// checksum covers it.
func (sw *sumWriter) writeSum() {
	sw.write(binary.LittleEndian.AppendUint32(nil, sw.crc.Sum32()))
}

// Read restores an index from a snapshot written by [Index.WriteTo],
// rebuilding its graph (see WriteTo). Damage is reported as an error for
// which [index.IsCorruption] is true; an error of the underlying reader
// other than an early end is returned wrapped.
func Read(r io.Reader) (*Index, error) {
	sr := &sumReader{crc: crc32.New(castagnoli)}
	if br, ok := r.(*bufio.Reader); ok {
		sr.r = br
	} else {
		sr.r = bufio.NewReaderSize(r, 1<<16)
	}
	hdr := make([]byte, headerSize)
	if err := sr.read(hdr); err != nil {
		return nil, readError("header", err)
	}
	if err := sr.checksum("header"); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	metric := index.Metric(hdr[10])
	dim, count := le.Uint32(hdr[12:]), le.Uint64(hdr[16:])
	m, ef := le.Uint32(hdr[24:]), le.Uint32(hdr[28:])
	switch {
	case [8]byte(hdr[:8]) != magic:
		return nil, corruptf("magic %q, want %q", hdr[:8], magic[:])
	case hdr[8] != version || hdr[9] != 0 || hdr[11] != 0:
		return nil, corruptf("unsupported snapshot version %d", le.Uint16(hdr[8:]))
	case !validMetric(metric):
		return nil, corruptf("unknown metric %d", hdr[10])
	case dim == 0 || dim > maxDim:
		return nil, corruptf("dimension %d out of range", dim)
	case count > maxCount:
		return nil, corruptf("count %d out of range", count)
	case m < 2 || m > maxM || ef == 0 || ef > maxEf:
		return nil, corruptf("bad parameters M=%d EfSearch=%d", m, ef)
	}
	c, err := New(int(dim), metric, &Options{M: int(m), EfSearch: int(ef)})
	if err != nil {
		return nil, corruptf("%v", err)
	}
	rec := make([]byte, 8+4*dim)
	vec := make([]float32, dim)
	for i := range count {
		if err := sr.read(rec); err != nil {
			return nil, readError(fmt.Sprintf("record %d", i), err)
		}
		key := le.Uint64(rec)
		for j := range vec {
			vec[j] = math.Float32frombits(le.Uint32(rec[8+4*j:]))
		}
		if err := index.CheckVector(vec, c.dim, c.metric); err != nil {
			return nil, corruptf("record %d: %v", i, err)
		}
		if _, dup := c.keys[key]; dup {
			return nil, corruptf("key %d stored twice", key)
		}
		if err := c.addPrepared(key, slices.Clone(vec)); err != nil {
			return nil, err
		}
	}
	if err := sr.checksum("snapshot"); err != nil {
		return nil, err
	}
	return c, nil
}

// sumReader reads through a checksum.
type sumReader struct {
	r   *bufio.Reader
	crc hash.Hash32
}

func (sr *sumReader) read(p []byte) error {
	if _, err := io.ReadFull(sr.r, p); err != nil {
		return err
	}
	sr.crc.Write(p)
	return nil
}

// checksum reads a stored checksum and compares it with the checksum of
// everything read before it; a later checksum covers it.
func (sr *sumReader) checksum(what string) error {
	want := sr.crc.Sum32()
	var b [4]byte
	if err := sr.read(b[:]); err != nil {
		return readError(what+" checksum", err)
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != want {
		return corruptf("%s checksum mismatch: stored %08x, computed %08x", what, got, want)
	}
	return nil
}

// readError reports an early end of the input as corruption, and wraps any
// other error of the reader.
func readError(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corruptf("truncated in %s", what)
	}
	return fmt.Errorf("coderhnsw: read %s: %w", what, err)
}

// corruptf returns an error wrapping index.ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: coder snapshot: %s", index.ErrCorrupt, fmt.Sprintf(format, args...))
}
