package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// The snapshot format of the native HNSW is drawn in the package doc
// (doc.go), with what the reader checks.

var hnswMagic = [8]byte{'M', 'N', 'E', 'M', 'O', 'H', 'N', 'S'}

const (
	hnswVersion    = 2
	hnswHeaderSize = 8 + 4 + 4*4 + 8 + 4*3 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcWriter counts and checksums what passes through it.
type crcWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
	// buf is the encoding scratch. It lives here, not on the stack: a
	// slice of it passed to the hash interface escapes, so a local array
	// would be a heap allocation per call (one per vector, 256 MB of
	// garbage for a 1M-vector snapshot).
	buf [4 * 64]byte
}

func (cw *crcWriter) write(p []byte) {
	cw.w.Write(p) // errors surface at Flush
	cw.crc.Write(p)
	cw.n += int64(len(p))
}

func (cw *crcWriter) u8(v uint8) {
	cw.buf[0] = v
	cw.write(cw.buf[:1])
}
func (cw *crcWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(cw.buf[:4], v)
	cw.write(cw.buf[:4])
}
func (cw *crcWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(cw.buf[:8], v)
	cw.write(cw.buf[:8])
}

func (cw *crcWriter) floats(v []float32) {
	b := &cw.buf
	for len(v) > 0 {
		n := min(len(v), 64)
		for i, x := range v[:n] {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		cw.write(b[:4*n])
		v = v[n:]
	}
}

// finish writes the checksum of everything so far and flushes.
func (cw *crcWriter) finish() (int64, error) {
	sum := cw.crc.Sum32()
	binary.LittleEndian.PutUint32(cw.buf[:4], sum)
	cw.w.Write(cw.buf[:4])
	cw.n += 4
	return cw.n, cw.w.Flush()
}

func newCRCWriter(w io.Writer) *crcWriter {
	return &crcWriter{w: bufio.NewWriterSize(w, 1<<16), crc: crc32.New(castagnoli)}
}

// WriteTo writes a snapshot of the index to w (format in the package doc).
// It holds the index exclusively while it writes, so the snapshot is a
// consistent cut; searches and writes wait. Tombstoned nodes are kept (so a
// reload routes exactly as before); run Compact first to drop them.
func (h *HNSW) WriteTo(w io.Writer) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Codes are not written: the reader trains the ranges on the vectors
	// and encodes them. Training here first gives this index the same
	// codes, so it answers exactly as its reload will. With no vector
	// added since the last training (deletes only tombstone, and Compact
	// trains), that training was on the same vectors and is not redone.
	if h.quant == SQ8 && h.sq.added.Load() > 0 {
		h.train()
	}
	cw := newCRCWriter(w)
	n := h.nodes.Load()
	entry, entryLevel := uint32(noNode), uint32(0)
	if ep := h.ep.Load(); ep != emptyEP {
		id, l := unpackEP(ep)
		entry, entryLevel = id, uint32(l)
	}
	cw.write(hnswMagic[:])
	cw.write([]byte{hnswVersion, 0, byte(h.metric), byte(h.quant)})
	cw.u32(uint32(h.dim))
	cw.u32(uint32(h.m))
	cw.u32(uint32(h.efC))
	cw.u32(uint32(h.efS))
	cw.u64(h.seed)
	cw.u32(n)
	cw.u32(entry)
	cw.u32(entryLevel)
	cw.u32(cw.crc.Sum32())
	for id := uint32(0); id < n; id++ {
		f := h.flags(id)
		cw.u8(uint8(f))
		if f&flagFree != 0 {
			continue
		}
		cw.u64(h.key(id))
		cw.u8(uint8(h.level(id)))
		cw.floats(h.vec(id))
		for l := 0; l <= h.level(id); l++ {
			list := h.links(id, l)
			cnt := list[0]
			cw.u32(cnt)
			for j := uint32(1); j <= cnt; j++ {
				cw.u32(list[j])
			}
		}
	}
	return cw.finish()
}

// crcReader reads through a checksum.
type crcReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	buf [4 * 64]byte // scratch, here for the reason given at crcWriter
	err error
}

func (cr *crcReader) read(p []byte) {
	if cr.err != nil {
		return
	}
	if _, err := io.ReadFull(cr.r, p); err != nil {
		cr.err = err
		return
	}
	cr.crc.Write(p)
}

func (cr *crcReader) u8() uint8 { cr.read(cr.buf[:1]); return cr.buf[0] }
func (cr *crcReader) u32() uint32 {
	cr.read(cr.buf[:4])
	return binary.LittleEndian.Uint32(cr.buf[:4])
}
func (cr *crcReader) u64() uint64 {
	cr.read(cr.buf[:8])
	return binary.LittleEndian.Uint64(cr.buf[:8])
}

func (cr *crcReader) floats(dst []float32) {
	b := &cr.buf
	for len(dst) > 0 && cr.err == nil {
		n := min(len(dst), 64)
		cr.read(b[:4*n])
		for i := range dst[:n] {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		dst = dst[n:]
	}
}

// checksum reads a stored checksum (not itself checksummed) and compares it
// with the running one.
func (cr *crcReader) checksum(what string) error {
	want := cr.crc.Sum32()
	var b [4]byte
	if cr.err == nil {
		if _, err := io.ReadFull(cr.r, b[:]); err != nil {
			cr.err = err
		}
	}
	if cr.err != nil {
		return corruptf("read %s checksum: %v", what, cr.err)
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != want {
		return corruptf("%s checksum mismatch: stored %08x, computed %08x", what, got, want)
	}
	cr.crc.Write(b[:]) // a header checksum is covered by the trailing one
	return nil
}

func newCRCReader(r io.Reader) *crcReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	return &crcReader{r: br, crc: crc32.New(castagnoli)}
}

// ReadHNSW restores an HNSW index from a snapshot written by WriteTo,
// without rebuilding the graph. It reads exactly the snapshot's bytes (the
// reader may hold more after them only if it is a *bufio.Reader). Any
// damage is reported as an error wrapping ErrCorrupt.
func ReadHNSW(r io.Reader) (*HNSW, error) {
	cr := newCRCReader(r)
	var magic [8]byte
	cr.read(magic[:])
	var vb [4]byte
	cr.read(vb[:])
	dim, m, efC, efS := cr.u32(), cr.u32(), cr.u32(), cr.u32()
	seed := cr.u64()
	n, entry, entryLevel := cr.u32(), cr.u32(), cr.u32()
	if err := cr.checksum("header"); err != nil {
		return nil, err
	}
	switch {
	case magic != hnswMagic:
		return nil, corruptf("not an HNSW snapshot (magic %q)", magic[:])
	case vb[0] < 1 || vb[0] > hnswVersion || vb[1] != 0:
		return nil, corruptf("unsupported HNSW snapshot version %d", binary.LittleEndian.Uint16(vb[:2]))
	case vb[0] == 1 && vb[3] != 0 || !Quantization(vb[3]).valid():
		return nil, corruptf("version %d snapshot with quantization %d", vb[0], vb[3])
	case !Metric(vb[2]).valid():
		return nil, corruptf("unknown metric %d", vb[2])
	case dim == 0 || dim > maxDim:
		return nil, corruptf("dimension %d out of range", dim)
	case m < 2 || m > maxM || efC == 0 || efS == 0 || seed == 0:
		return nil, corruptf("bad parameters M=%d efConstruction=%d efSearch=%d seed=%d", m, efC, efS, seed)
	case n >= noNode-1:
		return nil, corruptf("node count %d", n)
	}
	h := newHNSW(int(dim), Metric(vb[2]), HNSWOptions{M: int(m), EfConstruction: int(efC), EfSearch: int(efS), Seed: seed, Quantize: Quantization(vb[3])})
	for id := uint32(0); id < n; id++ {
		if err := h.readNode(cr, id); err != nil {
			return nil, err
		}
	}
	if err := cr.checksum("snapshot"); err != nil {
		return nil, err
	}
	if err := h.adopt(entry, int(entryLevel)); err != nil {
		return nil, err
	}
	return h, nil
}

// readNode reads the record of node id into a freshly allocated slot.
func (h *HNSW) readNode(cr *crcReader, id uint32) error {
	if _, err := h.allocSlot(); err != nil {
		return corruptf("%v", err)
	}
	ch, off := h.loc(id)
	f := uint32(cr.u8())
	if f&^(flagDeleted|flagFree) != 0 || f == flagDeleted|flagFree {
		return corruptf("node %d: bad flags %#x", id, f)
	}
	*h.flagWord(id) = f
	if f&flagFree != 0 {
		return cr.errAt(id)
	}
	ch.keys[off] = cr.u64()
	level := int(cr.u8())
	if level > maxLevel {
		return corruptf("node %d: level %d", id, level)
	}
	ch.levels[off] = uint8(level)
	h.setUpper(ch, off, level)
	cr.floats(h.vec(id))
	for l := 0; l <= level && cr.err == nil; l++ {
		list := h.links(id, l)
		cnt := cr.u32()
		if cr.err == nil && int(cnt) > h.maxLinks(l) {
			return corruptf("node %d layer %d: %d links, max %d", id, l, cnt, h.maxLinks(l))
		}
		list[0] = cnt
		for j := uint32(1); j <= cnt && cr.err == nil; j++ {
			list[j] = cr.u32()
		}
	}
	return cr.errAt(id)
}

func (cr *crcReader) errAt(id uint32) error {
	if cr.err == nil {
		return nil
	}
	if errors.Is(cr.err, io.EOF) || errors.Is(cr.err, io.ErrUnexpectedEOF) {
		return corruptf("truncated in node %d", id)
	}
	return fmt.Errorf("read node %d: %w", id, cr.err)
}

// adopt validates a freshly read graph (links, levels, vectors, keys, entry
// point) and builds the key map, free list and anchors.
func (h *HNSW) adopt(entry uint32, entryLevel int) error {
	n := h.nodes.Load()
	for id := uint32(0); id < n; id++ {
		f := h.flags(id)
		if f&flagFree != 0 {
			h.alloc.free = append(h.alloc.free, id)
			h.nfree.Add(1)
			continue
		}
		if err := CheckVector(h.vec(id), h.dim, h.metric); err != nil {
			return corruptf("node %d: %v", id, err)
		}
		if f&flagDeleted != 0 {
			h.deleted.Add(1)
		} else {
			key := h.key(id)
			if _, dup := h.keys.m[key]; dup {
				return corruptf("key %d stored twice", key)
			}
			h.keys.m[key] = id
		}
		for l := 0; l <= h.level(id); l++ {
			list := h.links(id, l)
			for j := uint32(1); j <= list[0]; j++ {
				nb := list[j]
				if nb >= n || nb == id || h.flags(nb)&flagFree != 0 || h.level(nb) < l {
					return corruptf("node %d layer %d: bad link to %d", id, l, nb)
				}
			}
		}
	}
	if h.quant == SQ8 {
		h.train()
	}
	if entry == noNode {
		if len(h.alloc.free) != int(n) {
			return corruptf("no entry point but %d nodes", int(n)-len(h.alloc.free))
		}
		return nil
	}
	if entry >= n || h.flags(entry)&flagFree != 0 || h.level(entry) != entryLevel {
		return corruptf("bad entry point %d at level %d", entry, entryLevel)
	}
	for id := uint32(0); id < n; id++ {
		if h.flags(id)&flagFree == 0 && h.level(id) > entryLevel {
			return corruptf("node %d above the entry point's level %d", id, entryLevel)
		}
	}
	h.ep.Store(packEP(entry, entryLevel))
	s := h.getSearcher()
	defer h.putSearcher(s)
	h.reanchor(s)
	return nil
}
