package index

import (
	"fmt"
	"io"
)

// The record snapshot format of the flat index is drawn in the package
// doc (doc.go).

var flatMagic = [8]byte{'M', 'N', 'E', 'M', 'O', 'F', 'L', 'T'}

const recordsVersion = 1

type recordsHeader struct {
	magic          [8]byte
	metric         Metric
	dim, count     int
	param1, param2 uint32
}

// writeRecords writes a record snapshot; each yields the records in order.
func writeRecords(w io.Writer, hdr recordsHeader, each func(yield func(uint64, []float32))) (int64, error) {
	cw := newCRCWriter(w)
	cw.write(hdr.magic[:])
	cw.write([]byte{recordsVersion, 0, byte(hdr.metric), 0})
	cw.u32(uint32(hdr.dim))
	cw.u64(uint64(hdr.count))
	cw.u32(hdr.param1)
	cw.u32(hdr.param2)
	cw.u32(cw.crc.Sum32())
	written := 0
	each(func(key uint64, vec []float32) {
		cw.u64(key)
		cw.floats(vec)
		written++
	})
	if written != hdr.count {
		return cw.n, fmt.Errorf("index: snapshot wrote %d records, header says %d", written, hdr.count)
	}
	return cw.finish()
}

// readRecords reads a record snapshot with the given magic: it validates the
// header, calls start with it, then add for every record (its vector
// checked; the slice is reused between calls), then verifies the checksum.
func readRecords(r io.Reader, magic [8]byte, start func(recordsHeader) error, add func(uint64, []float32) error) (recordsHeader, error) {
	cr := newCRCReader(r)
	var hdr recordsHeader
	var vb [4]byte
	cr.read(hdr.magic[:])
	cr.read(vb[:])
	dim, count := cr.u32(), cr.u64()
	hdr.param1, hdr.param2 = cr.u32(), cr.u32()
	if err := cr.checksum("header"); err != nil {
		return hdr, err
	}
	hdr.metric = Metric(vb[2])
	switch {
	case hdr.magic != magic:
		return hdr, corruptf("magic %q, want %q", hdr.magic[:], magic[:])
	case vb[0] != recordsVersion || vb[1] != 0 || vb[3] != 0:
		return hdr, corruptf("unsupported snapshot version %d", vb[0])
	case !hdr.metric.valid():
		return hdr, corruptf("unknown metric %d", vb[2])
	case dim == 0 || dim > maxDim:
		return hdr, corruptf("dimension %d out of range", dim)
	case count >= noNode:
		return hdr, corruptf("count %d out of range", count)
	}
	hdr.dim, hdr.count = int(dim), int(count)
	if err := start(hdr); err != nil {
		return hdr, err
	}
	vec := make([]float32, dim)
	for i := 0; i < hdr.count; i++ {
		key := cr.u64()
		cr.floats(vec)
		if err := cr.errAt(uint32(i)); err != nil {
			return hdr, err
		}
		if err := CheckVector(vec, hdr.dim, hdr.metric); err != nil {
			return hdr, corruptf("record %d: %v", i, err)
		}
		if err := add(key, vec); err != nil {
			return hdr, err
		}
	}
	return hdr, cr.checksum("snapshot")
}
