package vectorstore

import (
	"encoding/json"
	"fmt"

	"github.com/mnemodb/mnemo"
)

// FilterOf translates the filter value of a framework's call into a
// mnemo.Filter: nil (none), an *mnemo.Filter, its JSON text (a string,
// []byte or json.RawMessage), or a Go value that encodes to its JSON
// object. A map[string]any is read directly when it holds only the types
// mnemo.NewFilter takes, and through JSON otherwise (so a
// []map[string]any under $and, as langchaingo's Chroma store builds it,
// is a filter too). The language is Chroma's where-syntax (see
// mnemo.Filter); a malformed filter, or a value JSON cannot carry, is an
// error wrapping both ErrInvalid and mnemo.ErrBadFilter (or the encoding
// error).
func FilterOf(v any) (*mnemo.Filter, error) {
	var (
		f   *mnemo.Filter
		err error
	)
	switch v := v.(type) {
	case nil:
		return nil, nil
	case *mnemo.Filter:
		return v, nil
	case string:
		f, err = mnemo.ParseFilter(v)
	case []byte:
		f, err = mnemo.ParseFilter(string(v))
	case json.RawMessage:
		f, err = mnemo.ParseFilter(string(v))
	default:
		if m, ok := v.(map[string]any); ok {
			if f, err = mnemo.NewFilter(m); err == nil {
				return f, nil
			}
		}
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			f, err = mnemo.ParseFilter(string(b))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: filter: %w", ErrInvalid, err)
	}
	return f, nil
}
