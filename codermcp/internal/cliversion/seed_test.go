package cliversion_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cli"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// The version check's answers kept by the probe give the same
// capabilities as asking the CLI (issue 31: the first call after a
// restart does not wait for --version and the help texts), on the CLIs
// whose resume options differ (0.50.0 before "resume", newer after it)
// and the oldest one.
func TestSeedCapsEqualsAskingTheCLI(t *testing.T) {
	for _, v := range []string{"0.36.0", "0.50.0", codertest.NewestVersion} {
		t.Run(v, func(t *testing.T) {
			path := codertest.CLIVersion(t, v)
			// The seeded client runs a shim of our own, broken after the
			// seeding: a Caps that ran the CLI would fail.
			shim := filepath.Join(t.TempDir(), "codex")
			if err := os.WriteFile(shim, []byte("#!/bin/sh\nexec "+path+" \"$@\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := &cliversion.Prober{CacheDir: t.TempDir()}
			seeded := &cli.Client{Path: shim}
			if p.SeedCaps(seeded) {
				t.Fatal("seeded from an empty cache")
			}
			if _, err := p.Probe(context.Background(), shim); err != nil {
				t.Fatal(err)
			}
			if !p.SeedCaps(seeded) {
				t.Fatal("the probe's cache did not seed the version check")
			}
			if err := os.WriteFile(shim, []byte("#!/bin/sh\necho broken >&2\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := seeded.Caps(context.Background())
			if err != nil {
				t.Fatalf("a seeded Caps ran the CLI: %v", err)
			}
			want, err := (&cli.Client{Path: path, Home: t.TempDir()}).Caps(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seeded %+v, asking the CLI %+v", got, want)
			}
		})
	}
}

// Every cache that does not hold this very binary's answers leaves the
// version check to ask the CLI: a changed binary, a cache of the previous
// format (without answers), an unreadable or foreign entry, an answer
// missing, no cache at all.
func TestSeedCapsOnlyFromThisBinarysAnswers(t *testing.T) {
	real := codertest.CLIVersion(t, codertest.NewestVersion)
	old := codertest.CLIVersion(t, "0.50.0")
	dir := t.TempDir()
	shim := filepath.Join(dir, "bin", "codex")
	if err := os.MkdirAll(filepath.Dir(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(target string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(shim, []byte("#!/bin/sh\nexec "+target+" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(shim, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write(real, t0)
	cache := t.TempDir()
	p := &cliversion.Prober{CacheDir: cache}
	if _, err := p.Probe(context.Background(), shim); err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(entries) != 1 {
		t.Fatalf("cache files %v, want one", entries)
	}
	entry := entries[0]
	good, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	answers := func(m map[string]any) map[string]any { return m["answers"].(map[string]any) }
	var probed map[string]any
	if err := json.Unmarshal(good, &probed); err != nil || probed["answers"] == nil || len(answers(probed)) != 3 {
		t.Fatalf("the cache entry does not hold the three answers: %s", good)
	}
	cases := []struct {
		name  string
		entry []byte // written in place of the good entry; nil: removed
		shim  string // the binary behind the path afterwards
		mtime time.Time
	}{
		{"control: unchanged", good, real, t0},
		{"another version behind the same path", good, old, t0.Add(time.Minute)},
		{"same script, newer mtime", good, real, t0.Add(time.Second)},
		{"previous format without answers", edit(func(m map[string]any) { m["format"] = 1.0; delete(m, "answers") }), real, t0},
		{"current format without answers", edit(func(m map[string]any) { delete(m, "answers") }), real, t0},
		{"answers empty", edit(func(m map[string]any) { m["answers"] = map[string]any{} }), real, t0},
		{"--version missing", edit(func(m map[string]any) { delete(answers(m), "--version") }), real, t0},
		{"exec --help missing", edit(func(m map[string]any) { delete(answers(m), "exec --help") }), real, t0},
		{"exec resume --help missing", edit(func(m map[string]any) { delete(answers(m), "exec resume --help") }), real, t0},
		{"--version unreadable", edit(func(m map[string]any) { answers(m)["--version"] = "codex-cli garbage" }), real, t0},
		{"--version too old", edit(func(m map[string]any) { answers(m)["--version"] = "codex-cli 0.1.0" }), real, t0},
		{"another binary's key", edit(func(m map[string]any) { m["key"] = "/elsewhere|1|2" }), real, t0},
		{"future format", edit(func(m map[string]any) { m["format"] = 99.0 }), real, t0},
		{"not JSON", []byte("{"), real, t0},
		{"empty file", []byte{}, real, t0},
		{"removed", nil, real, t0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			write(c.shim, c.mtime)
			if c.entry == nil {
				_ = os.Remove(entry)
			} else if err := os.WriteFile(entry, c.entry, 0o600); err != nil {
				t.Fatal(err)
			}
			client := &cli.Client{Path: shim}
			seeded := p.SeedCaps(client)
			if want := c.name == "control: unchanged"; seeded != want {
				t.Fatalf("SeedCaps = %v, want %v", seeded, want)
			}
			if seeded {
				return
			}
			// Not seeded: Caps asks the binary that is there now.
			caps, err := client.Caps(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := codertest.NewestVersion
			if c.shim == old {
				want = "0.50.0"
			}
			if got := caps.Version.String(); got != want {
				t.Errorf("Caps says %s, want %s", got, want)
			}
		})
	}
	if (&cliversion.Prober{CacheDir: "-"}).SeedCaps(&cli.Client{Path: shim}) {
		t.Error("seeded with the cache disabled")
	}
}

// WarmHome sets up a new home the way the first turn would, and starts
// none of the configuration's MCP servers.
func TestWarmHome(t *testing.T) {
	path := codertest.CLIVersion(t, codertest.NewestVersion)
	dir := t.TempDir()
	home, err := codertest.WriteHome(dir, "http://127.0.0.1:9", "codermcp-test")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "mcp-server-started")
	script := filepath.Join(dir, "mcp-server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\nsleep 5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[mcp_servers.marker]\ncommand = %q\n", script)
	f.Close()
	before := countFiles(t, home)
	if err := cliversion.WarmHome(context.Background(), path, home, []string{"marker"}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	after := countFiles(t, home)
	if after <= before+10 {
		t.Errorf("the home holds %d files after warming, %d before: not set up", after, before)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("warming the home started an MCP server of the configuration")
	}
	if err := cliversion.WarmHome(context.Background(), filepath.Join(dir, "no-such-cli"), home, nil, 5*time.Second); err == nil {
		t.Error("a missing CLI warmed the home")
	}
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n++
		}
		return nil
	})
	return n
}
