package trinoauth_test

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func jsonNum(n int64) string { return strconv.FormatInt(n, 10) }
