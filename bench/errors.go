package bench

import "errors"

// ErrUnavailable reports a backend that this build of the harness cannot
// offer: the "coder" backend on windows. Run skips such a backend and says
// so on its progress writer; NewBackend returns the error.
var ErrUnavailable = errors.New("bench: backend not available on this platform")

// ErrFormat reports a results file that cannot be read (see
// ReadHnswlibResults).
var ErrFormat = errors.New("bench: malformed results file")
