package cliversion_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpfleet/mcpfleet/codermcp/internal/cliversion"
	"github.com/mcpfleet/mcpfleet/codermcp/internal/codertest"
)

// What each CLI of the matrix was seen to support by running it by hand
// (help texts, config errors, a turn against the test endpoint, the
// app-server's method list). The probe must find the same, from the binary.
var want = map[string]cliversion.Features{
	"0.36.0": {ExecJSON: true, EventStream: "legacy", Resume: false, ResumeOptionsAfter: false,
		Images: true, Profile: true, SandboxFlag: true, SkipGitCheck: true,
		ReasoningEfforts: []string{"minimal", "low", "medium", "high"}, WebSearch: "tools.web_search"},
	"0.50.0": {ExecJSON: true, EventStream: "thread", Resume: true, ResumeOptionsAfter: false,
		Images: true, Profile: true, SandboxFlag: true, SkipGitCheck: true, MCPServer: true, AppServer: "v1",
		ReasoningEfforts: []string{"minimal", "low", "medium", "high"}, WebSearch: "tools.web_search"},
	"0.153.4": {ExecJSON: true, EventStream: "thread", Resume: true, ResumeOptionsAfter: true, ResumeImages: true,
		Images: true, Profile: true, AddDir: true, SandboxFlag: true, SkipGitCheck: true, Review: true, MCPServer: true, AppServer: "v2",
		EffortsFromModel: true, WebSearch: "web_search"},
	"0.169.0": {ExecJSON: true, EventStream: "thread", Resume: true, ResumeOptionsAfter: true, ResumeImages: true,
		Images: true, Profile: true, AddDir: true, SandboxFlag: true, SkipGitCheck: true, Review: true, AppServer: "v2",
		EffortsFromModel: true, WebSearch: "web_search"},
	codertest.NewestVersion: {ExecJSON: true, EventStream: "thread", Resume: true, ResumeOptionsAfter: true, ResumeImages: true,
		Images: true, Profile: true, AddDir: true, SandboxFlag: true, SkipGitCheck: true, Review: true, AppServer: "v2",
		EffortsFromModel: true, WebSearch: "web_search"},
}

func TestProbeMatrix(t *testing.T) {
	for _, v := range codertest.Versions {
		t.Run(v, func(t *testing.T) {
			path := codertest.CLIVersion(t, v)
			p := &cliversion.Prober{CacheDir: t.TempDir()}
			start := time.Now()
			f, err := p.Probe(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("probe of %s took %s: %+v", v, time.Since(start).Round(time.Millisecond), f)
			w := want[v]
			if f.Version != v {
				t.Errorf("version %q, want %q", f.Version, v)
			}
			check := func(name string, got, want any) {
				t.Helper()
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Errorf("%s = %s, want %s", name, g, w)
				}
			}
			check("ExecJSON", f.ExecJSON, w.ExecJSON)
			check("EventStream", f.EventStream, w.EventStream)
			check("Resume", f.Resume, w.Resume)
			check("ResumeOptionsAfter", f.ResumeOptionsAfter, w.ResumeOptionsAfter)
			check("ResumeImages", f.ResumeImages, w.ResumeImages)
			check("Images", f.Images, w.Images)
			check("Profile", f.Profile, w.Profile)
			check("AddDir", f.AddDir, w.AddDir)
			check("SandboxFlag", f.SandboxFlag, w.SandboxFlag)
			check("SandboxModes", f.SandboxModes, []string{"read-only", "workspace-write", "danger-full-access"})
			check("SkipGitCheck", f.SkipGitCheck, w.SkipGitCheck)
			check("Review", f.Review, w.Review)
			check("MCPServer", f.MCPServer, w.MCPServer)
			check("AppServer", f.AppServer, w.AppServer)
			check("EffortsFromModel", f.EffortsFromModel, w.EffortsFromModel)
			if !w.EffortsFromModel {
				check("ReasoningEfforts", f.ReasoningEfforts, w.ReasoningEfforts)
			}
			check("WebSearch", f.WebSearch, w.WebSearch)
			if w.WebSearch == "web_search" {
				check("WebSearchModes", f.WebSearchModes, []string{"disabled", "cached", "indexed", "live"})
			}
		})
	}
}

func TestMissingFeatureNamesTheVersion(t *testing.T) {
	f := cliversion.Features{Version: "0.50.0", AppServer: "v1", ReasoningEfforts: []string{"minimal", "low", "medium", "high"}}
	err := f.Require(cliversion.FeatureApprovals)
	var me *cliversion.MissingError
	if !errors.As(err, &me) || me.Since != "0.153.4" || me.Installed != "0.50.0" {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "0.50.0") || !strings.Contains(err.Error(), "0.153.4 or later") {
		t.Errorf("message does not name both versions: %v", err)
	}
	if err := f.RequireEffort("xhigh"); !errors.As(err, &me) || !strings.Contains(err.Error(), `"xhigh"`) {
		t.Errorf("xhigh on 0.50.0: %v", err)
	}
	if err := f.RequireEffort("minimal"); err != nil {
		t.Errorf("minimal on 0.50.0: %v", err)
	}
	if err := (cliversion.Features{Version: "0.171.0", AppServer: "v2"}).Require(cliversion.FeatureApprovals); err != nil {
		t.Errorf("approvals on v2: %v", err)
	}
}

// The probe is stored and reused until the binary changes.
func TestProbeCachedUntilBinaryChanges(t *testing.T) {
	real := codertest.CLIVersion(t, codertest.NewestVersion)
	// A copy of the shim layout we may touch: a symlink to the real shim
	// would share its mtime, so wrap it in a script of our own.
	dir := t.TempDir()
	shim := filepath.Join(dir, "bin", "codex")
	if err := os.MkdirAll(filepath.Dir(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shim, []byte("#!/bin/sh\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	p := &cliversion.Prober{CacheDir: cache}
	f1, err := p.Probe(context.Background(), shim)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f2, err := p.Probe(context.Background(), shim)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second probe took %s: not served from the cache", d)
	}
	if f1.Version != f2.Version || f1.AppServer != f2.AppServer {
		t.Errorf("cached %+v differs from %+v", f2, f1)
	}
	// A reinstall (another version behind the same path) is probed anew.
	old := codertest.CLIVersion(t, "0.50.0")
	if err := os.WriteFile(shim, []byte("#!/bin/sh\nexec "+old+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	_ = os.Chtimes(shim, later, later)
	f3, err := p.Probe(context.Background(), shim)
	if err != nil {
		t.Fatal(err)
	}
	if f3.Version != "0.50.0" {
		t.Errorf("after the binary changed the probe says %s, want 0.50.0", f3.Version)
	}
}
