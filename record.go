package mnemo

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Record is one stored item of a collection. It is plain data: a backend
// copies what it keeps, so the caller may reuse a Record (its vector and
// metadata too) once the call it was given to returns, but must not
// change it while that call runs.
type Record struct {
	// ID names the record within its collection: 1 to MaxIDLength bytes of
	// valid UTF-8 (ErrInvalidID), without U+0000 (ErrInvalidRecord; Get
	// and Delete still take such an ID, for records stored before it was
	// refused). Upsert assigns a UUID v4 when it is empty.
	ID string
	// Vector is the embedding; its length is the collection's dimension.
	// Under the cosine metric the stored vector is the one given (the index
	// keeps its own normalised copy).
	Vector []float32
	// Content is the text the vector was made from (may be empty).
	Content string
	// Metadata holds JSON-compatible values: strings, numbers, booleans,
	// null, and lists and objects of them, at most MaxMetadataDepth levels
	// deep and MaxMetadataBytes long as JSON. Strings and keys must be
	// valid UTF-8. Other Go values (typed slices and maps, structs) are
	// stored as encoding/json encodes them, which replaces invalid UTF-8
	// in their strings. Reads return metadata as encoding/json decodes it:
	// numbers as float64, lists as []any, objects as map[string]any, and
	// nil for an empty map. Filters match scalar values.
	Metadata map[string]any
}

// Limits on records.
const (
	MaxIDLength      = 512
	MaxContentLength = 16 << 20
	// MaxMetadataBytes bounds the JSON encoding of a record's metadata.
	MaxMetadataBytes = 1 << 20
	// MaxMetadataDepth bounds how deeply metadata nests: the metadata
	// object is level 1 and each object or list inside a level deeper. It
	// also bounds a cyclic value (a map that contains itself), which is
	// refused for nesting too deep.
	MaxMetadataDepth = maxNesting
)

// validate checks a record at the API boundary (the vector is checked by
// the collection, which knows the dimension and metric) and returns its
// metadata encoded as JSON.
func validateRecord(r *Record, name string) ([]byte, error) {
	if err := validateID(r.ID); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if strings.IndexByte(r.ID, 0) >= 0 {
		return nil, fmt.Errorf("%w: %s: id contains U+0000", ErrInvalidRecord, name)
	}
	if len(r.Content) > MaxContentLength {
		return nil, fmt.Errorf("%w: %s: content is %d bytes, max %d", ErrInvalidRecord, name, len(r.Content), MaxContentLength)
	}
	if !utf8.ValidString(r.Content) {
		return nil, fmt.Errorf("%w: %s: content is not valid UTF-8", ErrInvalidRecord, name)
	}
	meta, err := encodeMetadata(r.Metadata)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidRecord, name, err)
	}
	return meta, nil
}

// recordName names record i of a batch in errors: by the ID the caller
// gave, or by its position when the backend assigns the ID (the caller has
// not seen it yet).
func recordName(i int, id string) string {
	if id == "" {
		return fmt.Sprintf("record %d of the batch (no id given)", i)
	}
	return fmt.Sprintf("record %q", id)
}

func validateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty id", ErrInvalidID)
	case len(id) > MaxIDLength:
		return fmt.Errorf("%w: id is %d bytes, max %d", ErrInvalidID, len(id), MaxIDLength)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: id %q is not valid UTF-8", ErrInvalidID, id)
	}
	return nil
}

// MaxBatchBytes bounds what one Upsert writes: the records' IDs,
// contents, vectors and encoded metadata together (the full-text index
// adds at most as much again). The engine holds it all in one Pebble batch
// in memory until it commits (Pebble refuses a batch of 4 GB), and a
// server backend in one transaction; a
// larger write is split into several Upserts by the caller, which decides
// what may be seen apart.
const MaxBatchBytes = 1 << 30

// RecordBytes is what r counts toward MaxBatchBytes, with meta its
// encoded metadata.
func RecordBytes(r Record, meta []byte) int {
	return len(r.ID) + len(r.Content) + 4*len(r.Vector) + len(meta)
}

// BatchTooLarge is the ErrBatchTooLarge of an n-record batch that went
// over MaxBatchBytes at record i.
func BatchTooLarge(n, i int) error {
	return fmt.Errorf("%w: the first %d of %d records already hold more than %d MiB (MaxBatchBytes); split the batch", ErrBatchTooLarge, i+1, n, MaxBatchBytes>>20)
}
