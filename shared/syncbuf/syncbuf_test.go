package syncbuf_test

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfleet/mcpfleet/shared/syncbuf"
)

// Writers and readers at once (run with -race): every write arrives whole,
// as with a child's stdout and stderr both pointed at one Buffer.
func TestBuffer(t *testing.T) {
	cases := []struct {
		name string
		run  func(b *syncbuf.Buffer)
		want []string
	}{
		{"goroutines", func(b *syncbuf.Buffer) {
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					for j := range 100 {
						fmt.Fprintf(b, "w%d-%d;", i, j)
						_ = b.String()
					}
				})
			}
			wg.Wait()
		}, []string{"w0-0;", "w7-99;"}},
		{"a child's stdout and stderr", func(b *syncbuf.Buffer) {
			cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done")
			cmd.Stdout, cmd.Stderr = b, b
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
		}, []string{"out1\n", "err5\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b syncbuf.Buffer
			tc.run(&b)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%q lacks %q", b.String(), w)
				}
			}
		})
	}
}
