// Package vecio reads and writes the TEXMEX vector formats used by ANN
// benchmarks: fvecs (float32), ivecs (int32) and bvecs (uint8). Each record
// is a little-endian int32 dimension followed by that many components.
package vecio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// MaxDim bounds the dimension a record may claim.
const MaxDim = 1 << 16

// ErrFormat reports a malformed file.
var ErrFormat = errors.New("vecio: malformed vector file")

// ReadFvecs reads every record of an fvecs stream. At most limit records are
// read when limit > 0. All records must share one dimension.
func ReadFvecs(r io.Reader, limit int) ([][]float32, error) {
	return readAll(r, limit, 4, func(dst []float32, b []byte) {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	})
}

// ReadBvecs reads an bvecs stream, converting components to float32.
func ReadBvecs(r io.Reader, limit int) ([][]float32, error) {
	return readAll(r, limit, 1, func(dst []float32, b []byte) {
		for i := range dst {
			dst[i] = float32(b[i])
		}
	})
}

// ReadIvecs reads every record of an ivecs stream (ground-truth ids).
func ReadIvecs(r io.Reader, limit int) ([][]int32, error) {
	rows, err := readAll(r, limit, 4, func(dst []float32, b []byte) {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(rows))
	for i, row := range rows {
		out[i] = make([]int32, len(row))
		for j, x := range row {
			out[i][j] = int32(math.Float32bits(x))
		}
	}
	return out, nil
}

func readAll(r io.Reader, limit, width int, decode func([]float32, []byte)) ([][]float32, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var out [][]float32
	var hdr [4]byte
	var buf []byte
	dim := -1
	for limit <= 0 || len(out) < limit {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if err == io.EOF {
				break
			}
			return nil, fmt.Errorf("%w: record %d: %v", ErrFormat, len(out), err)
		}
		d := int(int32(binary.LittleEndian.Uint32(hdr[:])))
		if d <= 0 || d > MaxDim || (dim >= 0 && d != dim) {
			return nil, fmt.Errorf("%w: record %d has dimension %d", ErrFormat, len(out), d)
		}
		dim = d
		if cap(buf) < d*width {
			buf = make([]byte, d*width)
		}
		if _, err := io.ReadFull(br, buf[:d*width]); err != nil {
			return nil, fmt.Errorf("%w: record %d truncated: %v", ErrFormat, len(out), err)
		}
		v := make([]float32, d)
		decode(v, buf[:d*width])
		out = append(out, v)
	}
	return out, nil
}

// ReadFvecsFile, ReadIvecsFile and ReadBvecsFile open path and read it.
func ReadFvecsFile(path string, limit int) ([][]float32, error) {
	return readFile(path, limit, ReadFvecs)
}

// ReadBvecsFile reads a bvecs file.
func ReadBvecsFile(path string, limit int) ([][]float32, error) {
	return readFile(path, limit, ReadBvecs)
}

// ReadIvecsFile reads an ivecs file.
func ReadIvecsFile(path string, limit int) ([][]int32, error) {
	return readFile(path, limit, ReadIvecs)
}

func readFile[T any](path string, limit int, read func(io.Reader, int) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, limit)
}

// WriteFvecs writes vectors in fvecs format.
func WriteFvecs(w io.Writer, vecs [][]float32) error {
	bw := bufio.NewWriter(w)
	var b [4]byte
	for _, v := range vecs {
		binary.LittleEndian.PutUint32(b[:], uint32(len(v)))
		bw.Write(b[:])
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			bw.Write(b[:])
		}
	}
	return bw.Flush()
}

// WriteIvecs writes id lists in ivecs format.
func WriteIvecs(w io.Writer, rows [][]int32) error {
	bw := bufio.NewWriter(w)
	var b [4]byte
	for _, row := range rows {
		binary.LittleEndian.PutUint32(b[:], uint32(len(row)))
		bw.Write(b[:])
		for _, x := range row {
			binary.LittleEndian.PutUint32(b[:], uint32(x))
			bw.Write(b[:])
		}
	}
	return bw.Flush()
}
