// Command pipefloor answers every line that names an "id" with a fixed
// JSON-RPC result, without decoding anything: the machine's floor for a
// round trip over two pipes and two processes, to read BenchmarkStdioPing's
// figures against (PING_BIN=path/to/pipefloor).
package main

import (
	"bufio"
	"bytes"
	"os"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	answer := []byte(`{"jsonrpc":"2.0","id":0,"result":{}}` + "\n")
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		if bytes.Contains(line, []byte(`"id"`)) {
			if _, err := os.Stdout.Write(answer); err != nil {
				return
			}
		}
	}
}
