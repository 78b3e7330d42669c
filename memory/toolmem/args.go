package toolmem

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// encodeArgs returns the JSON text of args ("{}" for nil), or ErrInvalid.
func encodeArgs(args map[string]any) (string, error) {
	if args == nil {
		return "{}", nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("%w: tool_args cannot be encoded as JSON: %v", ErrInvalid, err)
	}
	if d := jsonDepth(b); d > MaxArgsDepth {
		return "", fmt.Errorf("%w: tool_args nest %d levels deep, max %d", ErrInvalid, d, MaxArgsDepth)
	}
	return string(b), nil
}

// jsonDepth returns how deeply valid JSON text nests objects and arrays.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// decodeArgs returns the arguments stored in a record's metadata: JSON
// text (see Arguments), or an object stored by an earlier version. What
// cannot be read (a record written by something else) is an empty map.
func decodeArgs(v any) map[string]any {
	switch a := v.(type) {
	case string:
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(a)))
		dec.UseNumber()
		if dec.Decode(&m) == nil && m != nil {
			return m
		}
	case map[string]any:
		return numbers(a).(map[string]any)
	}
	return map[string]any{}
}

// numbers returns v with every float64 replaced by the json.Number of its
// JSON text; v is a value as encoding/json decodes it.
func numbers(v any) any {
	switch x := v.(type) {
	case float64:
		b, _ := json.Marshal(x) // finite: it was decoded from JSON
		return json.Number(b)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = numbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbers(e)
		}
		return out
	}
	return v
}

// DecodeArgs decodes e.ToolArgs into v, as json.Unmarshal would decode
// the arguments' JSON text: into a struct or typed map the caller
// declares, numbers keep their exact value (an int64 field gets
// 9007199254740993, not 9007199254740992).
func (e Entry) DecodeArgs(v any) error {
	b, err := json.Marshal(e.ToolArgs)
	if err != nil {
		return fmt.Errorf("%w: tool_args: %v", ErrInvalid, err)
	}
	return json.Unmarshal(b, v)
}
