// Command modproxy writes a file:// Go module proxy holding modules of this
// repository at given versions, built from the working tree. scripts/gomod
// uses it so that go get and go mod tidy can resolve the unreleased shared
// module, and scripts/release-check uses it to install each server the way a
// user would, with GOWORK=off.
//
//	modproxy -out DIR -repo ROOT shared@v0.1.0 proxymcp@v0.1.0 ...
//
// It prints the go.sum lines of every module it adds, which is what a
// server's go.sum gains when it requires that release.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

const pathPrefix = "github.com/mcpfleet/mcpfleet/"

func main() {
	out := flag.String("out", "", "directory to write the proxy into")
	repo := flag.String("repo", ".", "repository root")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -out DIR [-repo ROOT] dir@version ...")
		os.Exit(2)
	}
	for _, arg := range flag.Args() {
		dir, version, ok := strings.Cut(arg, "@")
		if !ok {
			fmt.Fprintf(os.Stderr, "modproxy: %q: want dir@version\n", arg)
			os.Exit(2)
		}
		if err := add(*out, filepath.Join(*repo, dir), pathPrefix+dir, version); err != nil {
			fmt.Fprintf(os.Stderr, "modproxy: %s: %v\n", arg, err)
			os.Exit(1)
		}
		if err := printSums(*out, pathPrefix+dir, version); err != nil {
			fmt.Fprintf(os.Stderr, "modproxy: %s: %v\n", arg, err)
			os.Exit(1)
		}
	}
}

func add(out, dir, path, version string) error {
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	esc, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, version+".mod"), mod, 0o644); err != nil {
		return err
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(vdir, version+".info"), []byte(info), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(vdir, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(f, mv, dir); err != nil {
		f.Close()
		return fmt.Errorf("zip %s: %w", dir, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	list := filepath.Join(vdir, "list")
	old, _ := os.ReadFile(list)
	if !strings.Contains("\n"+string(old), "\n"+version+"\n") {
		old = append(old, version+"\n"...)
	}
	return os.WriteFile(list, old, 0o644)
}

// printSums writes the go.sum lines for path@version as served from out.
func printSums(out, path, version string) error {
	esc, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	zipHash, err := dirhash.HashZip(filepath.Join(vdir, version+".zip"), dirhash.Hash1)
	if err != nil {
		return err
	}
	modFile := filepath.Join(vdir, version+".mod")
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) { return os.Open(modFile) })
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n%s %s/go.mod %s\n", path, version, zipHash, path, version, modHash)
	return nil
}
