package statspage

import "testing"

func TestCSVURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8404/stats":       "http://127.0.0.1:8404/stats;csv;norefresh",
		"http://127.0.0.1:8404/stats/":      "http://127.0.0.1:8404/stats/;csv;norefresh",
		"http://127.0.0.1:8404/":            "http://127.0.0.1:8404/;csv;norefresh",
		"http://127.0.0.1:8404":             "http://127.0.0.1:8404/;csv;norefresh",
		"https://lb.example/haproxy?stats":  "https://lb.example/haproxy?stats;csv;norefresh",
		"http://u:p@127.0.0.1:8404/a/stats": "http://u:p@127.0.0.1:8404/a/stats;csv;norefresh",
	} {
		if got := csvURL(in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
