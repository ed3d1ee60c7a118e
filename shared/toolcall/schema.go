package toolcall

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaProvider is implemented by an argument type whose JSON shape no Go
// type spells (proxymcp's weight: an integer 0-256 or a percentage
// string, a oneOf). Its schema is used as given; the type decodes itself
// with UnmarshalJSON.
type SchemaProvider interface {
	JSONSchema() *jsonschema.Schema
}

// Struct tags read besides `json` (name; omitempty or omitzero makes the
// argument optional) and `jsonschema` (the description, as
// google/jsonschema-go reads it). On a slice field the keywords that
// describe a value (enum, pattern, minimum...) apply to its items.
var keywordTags = []string{"enum", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "default"}

// inputSchema derives the input schema of a tool whose arguments are t, a
// struct: one property per exported field, named by its json tag,
// required unless the tag says omitempty or omitzero, closed to unknown
// properties (additionalProperties: false, nested objects too). Pointer
// and slice fields do not admit null: a pointer only tells an omitted
// argument from a zero one. It is what AddRead and AddChange bind to a
// tool.
func inputSchema(t reflect.Type) (*jsonschema.Schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the input type %s is not a struct", t)
	}
	provided := map[reflect.Type]*jsonschema.Schema{}
	if err := collectProviders(t, provided, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: provided})
	if err != nil {
		return nil, err
	}
	if err := refine(t, s, provided); err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return s, nil
}

var providerType = reflect.TypeFor[SchemaProvider]()

// collectProviders finds the SchemaProvider types t uses, so that
// jsonschema-go takes their schemas instead of reflecting them.
func collectProviders(t reflect.Type, out map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	if s := providedSchema(t); s != nil {
		out[t] = s
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return collectProviders(t.Elem(), out, seen)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if f.IsExported() && !f.Anonymous {
				if err := collectProviders(f.Type, out, seen); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func providedSchema(t reflect.Type) *jsonschema.Schema {
	switch {
	case t.Implements(providerType):
		return reflect.Zero(t).Interface().(SchemaProvider).JSONSchema()
	case reflect.PointerTo(t).Implements(providerType):
		return reflect.New(t).Interface().(SchemaProvider).JSONSchema()
	}
	return nil
}

// refine turns jsonschema-go's reflection of t into the schema a tool
// declares: no null for pointers and slices (arguments are never null),
// properties in name order (as the hand-written schemas listed them), and
// the keyword tags of every field.
func refine(t reflect.Type, s *jsonschema.Schema, provided map[reflect.Type]*jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	if len(s.Types) > 0 {
		s.Types = slices.DeleteFunc(slices.Clone(s.Types), func(x string) bool { return x == "null" })
		switch len(s.Types) {
		case 0:
			s.Types = nil
		case 1:
			s.Type, s.Types = s.Types[0], nil
		}
	}
	if provided[t] != nil {
		return nil
	}
	s.PropertyOrder = nil
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		// jsonschema-go bounds sized integers by their Go range; a tool
		// declares only the bounds its tags say, and a value the Go type
		// cannot hold is refused when decoded, naming the argument.
		s.Minimum, s.Maximum = nil, nil
	case reflect.Slice, reflect.Array:
		return refine(t.Elem(), s.Items, provided)
	case reflect.Map:
		return refine(t.Elem(), s.AdditionalProperties, provided)
	case reflect.Struct:
		if s.Properties == nil {
			return nil // a type with a schema of its own (time.Time)
		}
		for _, f := range reflect.VisibleFields(t) {
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			if err := refine(f.Type, ps, provided); err != nil {
				return err
			}
			if err := applyTags(f, ps); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	}
	return nil
}

// jsonName is the argument name of a field, as encoding/json and
// jsonschema-go name it; false for fields that are not arguments.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// applyTags sets the keywords a field's tags declare on its schema s.
func applyTags(f reflect.StructField, s *jsonschema.Schema) error {
	if err := knownTags(f.Tag); err != nil {
		return err
	}
	value := s // where the value keywords go: the items of a list
	if t := derefType(f.Type); (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && s.Items != nil {
		value = s.Items
	}
	var err error
	num := func(key string) *float64 {
		v, ok := f.Tag.Lookup(key)
		if !ok || err != nil {
			return nil
		}
		n, perr := strconv.ParseFloat(v, 64)
		if perr != nil {
			err = fmt.Errorf("%s:%q is not a number", key, v)
			return nil
		}
		return &n
	}
	count := func(key string) *int {
		v, ok := f.Tag.Lookup(key)
		if !ok || err != nil {
			return nil
		}
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 {
			err = fmt.Errorf("%s:%q is not a count", key, v)
			return nil
		}
		return &n
	}
	if n := num("minimum"); n != nil {
		value.Minimum = n
	}
	if n := num("maximum"); n != nil {
		value.Maximum = n
	}
	if n := count("minLength"); n != nil {
		value.MinLength = n
	}
	if n := count("maxLength"); n != nil {
		value.MaxLength = n
	}
	if n := count("minItems"); n != nil {
		s.MinItems = n
	}
	if n := count("maxItems"); n != nil {
		s.MaxItems = n
	}
	if err != nil {
		return err
	}
	if p, ok := f.Tag.Lookup("pattern"); ok {
		value.Pattern = p
	}
	if e, ok := f.Tag.Lookup("enum"); ok {
		for _, x := range strings.Split(e, ",") {
			v, perr := typedValue(value.Type, x)
			if perr != nil {
				return fmt.Errorf("enum value %q: %w", x, perr)
			}
			value.Enum = append(value.Enum, v)
		}
	}
	if d, ok := f.Tag.Lookup("default"); ok {
		v, perr := typedValue(s.Type, d)
		if perr != nil {
			return fmt.Errorf("default %q: %w", d, perr)
		}
		b, _ := json.Marshal(v)
		s.Default = b
	}
	return nil
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// typedValue reads a tag's text as a value of the JSON type typ: a string
// as written, anything else as JSON ("false", "10").
func typedValue(typ, text string) (any, error) {
	if typ == "string" {
		return text, nil
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("not a JSON %s", typ)
	}
	return v, nil
}

// knownTags refuses a tag key this package does not read, so that a
// misspelt keyword (maxlength) fails registration instead of vanishing
// from the schema.
func knownTags(tag reflect.StructTag) error {
	s := string(tag)
	for s != "" {
		s = strings.TrimLeft(s, " ")
		i := strings.IndexByte(s, ':')
		if i <= 0 || i+1 >= len(s) || s[i+1] != '"' {
			return fmt.Errorf("malformed struct tag %q", string(tag))
		}
		key := s[:i]
		s = s[i+1:]
		// The value is a Go string literal: find its closing quote.
		j := 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return fmt.Errorf("malformed struct tag %q", string(tag))
		}
		s = s[j+1:]
		if key != "json" && key != "jsonschema" && !slices.Contains(keywordTags, key) {
			return fmt.Errorf("unknown tag %q (known: json, jsonschema, %s)", key, strings.Join(keywordTags, ", "))
		}
	}
	return nil
}
