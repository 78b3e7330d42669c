package index

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is. The errors returned wrap them with
// the details (which key, which dimension).
var (
	// ErrDimension reports a vector whose length is not the index's dimension.
	ErrDimension = errors.New("index: dimension mismatch")
	// ErrNonFinite reports a vector with a NaN or infinite component.
	ErrNonFinite = errors.New("index: vector has a non-finite component")
	// ErrZeroVector reports a zero vector where the cosine metric needs a
	// direction.
	ErrZeroVector = errors.New("index: zero vector under the cosine metric")
	// ErrNormOverflow reports a vector, under the cosine metric, whose
	// components are finite but whose squared norm overflows float32, so
	// that it cannot be normalised.
	ErrNormOverflow = errors.New("index: vector norm overflows float32 under the cosine metric")
	// ErrInvalidOptions reports options that cannot be used.
	ErrInvalidOptions = errors.New("index: invalid options")
	// ErrCorrupt reports a snapshot that cannot be decoded. Test for it with
	// IsCorruption.
	ErrCorrupt = errors.New("index: corrupt snapshot")
)

// IsCorruption reports whether err was caused by a corrupt or truncated
// snapshot.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorrupt) }

// corruptf returns an error wrapping ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
