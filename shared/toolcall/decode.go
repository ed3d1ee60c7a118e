package toolcall

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// decoder sets a Go value from arguments the schema already validated
// (objects as map[string]any, numbers as json.Number): decoding the
// validated value instead of the wire bytes parses each call once, and
// takes an integer written 8080.0 or 1e3, which the schema accepts and
// encoding/json refuses for an int.
type decoder func(v reflect.Value, x any) error

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decoderFor builds the decoder of t once, when the tool is registered.
func decoderFor(t reflect.Type) (decoder, error) {
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return func(v reflect.Value, x any) error {
			b, err := json.Marshal(x)
			if err != nil {
				return err
			}
			return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b)
		}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return func(v reflect.Value, x any) error {
			s, ok := x.(string)
			if !ok {
				return mismatch(x, t)
			}
			v.SetString(s)
			return nil
		}, nil
	case reflect.Bool:
		return func(v reflect.Value, x any) error {
			b, ok := x.(bool)
			if !ok {
				return mismatch(x, t)
			}
			v.SetBool(b)
			return nil
		}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value, x any) error {
			n, ok := intValue(x)
			if !ok {
				if whole(x) {
					return outOfRange(x, t)
				}
				return mismatch(x, t)
			}
			if v.OverflowInt(n) {
				return outOfRange(x, t)
			}
			v.SetInt(n)
			return nil
		}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(v reflect.Value, x any) error {
			n, ok := uintValue(x)
			if !ok {
				if whole(x) {
					return outOfRange(x, t)
				}
				return mismatch(x, t)
			}
			if v.OverflowUint(n) {
				return outOfRange(x, t)
			}
			v.SetUint(n)
			return nil
		}, nil
	case reflect.Float32, reflect.Float64:
		return func(v reflect.Value, x any) error {
			num, ok := x.(json.Number)
			if !ok {
				return mismatch(x, t)
			}
			f, err := num.Float64()
			if err != nil || v.OverflowFloat(f) {
				return mismatch(x, t)
			}
			v.SetFloat(f)
			return nil
		}, nil
	case reflect.Pointer:
		elem, err := decoderFor(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(v reflect.Value, x any) error {
			if x == nil {
				return nil
			}
			p := reflect.New(t.Elem())
			if err := elem(p.Elem(), x); err != nil {
				return err
			}
			v.Set(p)
			return nil
		}, nil
	case reflect.Slice:
		elem, err := decoderFor(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(v reflect.Value, x any) error {
			list, ok := x.([]any)
			if !ok {
				return mismatch(x, t)
			}
			s := reflect.MakeSlice(t, len(list), len(list))
			for i, item := range list {
				if err := elem(s.Index(i), item); err != nil {
					return within(fmt.Sprintf("[%d]", i), err)
				}
			}
			v.Set(s)
			return nil
		}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key type %s is not a string", t.Key())
		}
		elem, err := decoderFor(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(v reflect.Value, x any) error {
			obj, ok := x.(map[string]any)
			if !ok {
				return mismatch(x, t)
			}
			m := reflect.MakeMapWithSize(t, len(obj))
			for k, item := range obj {
				e := reflect.New(t.Elem()).Elem()
				if err := elem(e, item); err != nil {
					return within("."+k, err)
				}
				m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
			}
			v.Set(m)
			return nil
		}, nil
	case reflect.Struct:
		return structDecoder(t)
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil, fmt.Errorf("interface type %s has methods", t)
		}
		return func(v reflect.Value, x any) error {
			if x != nil {
				v.Set(reflect.ValueOf(plain(x)))
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("type %s cannot be an argument", t)
}

type fieldDecoder struct {
	name  string
	index []int
	dec   decoder
}

func structDecoder(t reflect.Type) (decoder, error) {
	var fields []fieldDecoder
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		if len(f.Index) > 1 && viaPointer(t, f.Index) {
			return nil, fmt.Errorf("field %s is promoted through an embedded pointer", f.Name)
		}
		dec, err := decoderFor(f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		fields = append(fields, fieldDecoder{name: name, index: f.Index, dec: dec})
	}
	return func(v reflect.Value, x any) error {
		obj, ok := x.(map[string]any)
		if !ok {
			return mismatch(x, t)
		}
		// Arguments the type does not name (the pipeline's dryRun and
		// confirm) were accepted by the schema and are not the type's.
		for _, f := range fields {
			item, ok := obj[f.name]
			if !ok {
				continue
			}
			if err := f.dec(v.FieldByIndex(f.index), item); err != nil {
				return within("."+f.name, err)
			}
		}
		return nil
	}, nil
}

func viaPointer(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Pointer {
			return true
		}
		t = f.Type
	}
	return false
}

// intValue reads a whole number however it was written (8080, 8080.0,
// 8.08e3).
func intValue(x any) (int64, bool) {
	num, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return n, true
	}
	r, ok := new(big.Rat).SetString(string(num))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

func uintValue(x any) (uint64, bool) {
	num, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseUint(string(num), 10, 64); err == nil {
		return n, true
	}
	r, ok := new(big.Rat).SetString(string(num))
	if !ok || !r.IsInt() || !r.Num().IsUint64() {
		return 0, false
	}
	return r.Num().Uint64(), true
}

// whole reports whether x is a whole number, of any size.
func whole(x any) bool {
	num, ok := x.(json.Number)
	if !ok {
		return false
	}
	r, ok := new(big.Rat).SetString(string(num))
	return ok && r.IsInt()
}

// plain converts a validated value for an `any` field to what
// encoding/json would have produced (float64 numbers).
func plain(x any) any {
	switch t := x.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			out[i] = plain(v)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			out[k] = plain(v)
		}
		return out
	}
	return x
}

// mismatch reports a value the schema let through but the Go type cannot
// hold: the schema and the type disagree, a bug in the server.
func mismatch(x any, t reflect.Type) error {
	return fmt.Errorf("a %T cannot be decoded into %s", x, t)
}

// rangeError is a whole number the schema admits and the argument's Go
// type cannot hold (an int32 partition given 3000000000): the caller's
// mistake, said in argschema's words.
type rangeError struct {
	path string // ".partition", ".filters[2].value"
	msg  string // "must be at most 2147483647, got the number 3000000000"
}

func (e *rangeError) Error() string {
	return fmt.Sprintf("argument %q %s", strings.TrimPrefix(e.path, "."), e.msg)
}

func outOfRange(x any, t reflect.Type) error {
	var lo, hi string
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		lo, hi = strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
	default:
		lo, hi = "0", strconv.FormatUint(1<<t.Bits()-1, 10)
	}
	bound := "at most " + hi
	if strings.HasPrefix(string(x.(json.Number)), "-") {
		bound = "at least " + lo
	}
	return &rangeError{msg: fmt.Sprintf("must be %s, got the number %s", bound, x)}
}

// within adds one step of the argument's path to a decoding error.
func within(step string, err error) error {
	var re *rangeError
	if errors.As(err, &re) {
		return &rangeError{path: step + re.path, msg: re.msg}
	}
	return fmt.Errorf("%s: %w", strings.TrimPrefix(step, "."), err)
}
