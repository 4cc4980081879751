package sqlbackend

import (
	"fmt"
	"math"
	"strconv"
)

// Stored values are scanned into any and converted here, not scanned into
// typed destinations: a value that is NULL (a column whose NOT NULL a hand
// made or foreign schema lacks) or of another type (SQLite keeps any type
// in any column) then fails its row alone, never the whole statement, so
// that one damaged release cannot hide the others.

// valueError says why a stored value cannot be used.
type valueError struct {
	col string
	v   any
}

func (e *valueError) Error() string {
	if e.v == nil {
		return fmt.Sprintf("column %s is NULL", e.col)
	}
	return fmt.Sprintf("column %s holds %s", e.col, describeValue(e.v))
}

// describeValue names a stored value's type, and the value if it is short.
func describeValue(v any) string {
	switch v := v.(type) {
	case []byte:
		if len(v) > 32 {
			return fmt.Sprintf("%d bytes", len(v))
		}
		return fmt.Sprintf("the bytes %q", v)
	case string:
		if len(v) > 32 {
			return fmt.Sprintf("a string of %d bytes", len(v))
		}
		return fmt.Sprintf("the string %q", v)
	}
	return fmt.Sprintf("the %T %v", v, v)
}

// values converts the stored values of one row, remembering the first
// that fails.
type values struct {
	cols []string // the columns, in the order of the row's values
	err  error
}

func (c *values) fail(i int, v any) {
	if c.err == nil {
		c.err = &valueError{col: c.cols[i], v: v}
	}
}

// text returns value i as a string: text or bytes.
func (c *values) text(i int, v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	c.fail(i, v)
	return ""
}

// bytes returns value i as bytes: bytes or text.
func (c *values) bytes(i int, v any) []byte {
	switch v := v.(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	c.fail(i, v)
	return nil
}

// integer returns value i as an int64: an integer, or the decimal digits
// of one (drivers of the text protocols return numbers as text).
func (c *values) integer(i int, v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	case []byte:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n
		}
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	c.fail(i, v)
	return 0
}

// int returns value i as an int, failing one that does not fit.
func (c *values) int(i int, v any) int {
	n := c.integer(i, v)
	if n < math.MinInt32 || n > math.MaxInt32 {
		c.fail(i, v)
		return 0
	}
	return int(n)
}

// row returns destinations for n values to scan into, and the values.
func row(n int) ([]any, []any) {
	vals := make([]any, n)
	dest := make([]any, n)
	for i := range vals {
		dest[i] = &vals[i]
	}
	return dest, vals
}

// bool returns value i as a bool: a boolean, or the integer 0 or 1 (MySQL
// and SQLite store booleans as integers).
func (c *values) bool(i int, v any) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	switch c.integer(i, v) {
	case 0:
		return false
	case 1:
		return true
	}
	c.fail(i, v)
	return false
}
