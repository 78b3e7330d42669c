package main

import (
	"bytes"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, &out, &errOut); code != 0 {
			t.Fatalf("mnemo %v: exit %d: %s", args, code, errOut.String())
		}
		s := out.String()
		if !strings.HasPrefix(s, "mnemo github.com/mnemodb/mnemo ") || !strings.Contains(s, "built with go") {
			t.Errorf("mnemo %v printed %q; want the module path and the toolchain", args, s)
		}
	}
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"version", "extra"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d, stderr %q", code, errOut.String())
	}
}

// TestVersionText checks the description of each kind of build info: a
// release, a checkout with VCS information, clean or modified, a build
// without VCS information and a binary without build info.
func TestVersionText(t *testing.T) {
	main := debug.Module{Path: "github.com/mnemodb/mnemo", Version: "(devel)"}
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "eb65ae3f00"},
			{Key: "vcs.time", Value: "2026-11-30T15:20:00Z"}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name string
		info *debug.BuildInfo
		want []string
	}{
		{"release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: main.Path, Version: "v1.2.0"}},
			[]string{"mnemo github.com/mnemodb/mnemo v1.2.0\n", "no VCS information", "built with go1.26.8 for "}},
		{"checkout, modified", &debug.BuildInfo{GoVersion: "go1.26.8", Main: main, Settings: vcs("true")},
			[]string{"mnemo github.com/mnemodb/mnemo (devel)\n", "git revision eb65ae3f00, committed 2026-11-30T15:20:00Z, with uncommitted changes\n"}},
		{"checkout, clean", &debug.BuildInfo{GoVersion: "go1.26.8", Main: main, Settings: vcs("false")},
			[]string{"git revision eb65ae3f00, committed 2026-11-30T15:20:00Z, clean\n"}},
		{"-buildvcs=false", &debug.BuildInfo{GoVersion: "go1.26.8", Main: main},
			[]string{"mnemo github.com/mnemodb/mnemo (devel)\n", "no VCS information (built with -buildvcs=false, or outside a checkout)\n"}},
		{"no version recorded", &debug.BuildInfo{Main: debug.Module{Path: main.Path}},
			[]string{"mnemo github.com/mnemodb/mnemo (devel)\n", "built with go"}},
		{"no build info", nil, []string{"mnemo (devel)\n", "no build information"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := versionText(tt.info)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}

// TestVersionOfBuiltBinary checks that "mnemo version" reports the
// revision that "go version -m" finds in the binary, or none: in mnemo as
// go build -buildvcs=true makes it (the package's one build: only go
// build stamps a revision, and only when it finds the repository, which
// depends on the checkout) and in the test binary run as mnemo, which go
// test never stamps, as go build -buildvcs=false would not.
func TestVersionOfBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	skipUnderRace(t, "builds the binary without the race detector")
	tests := []struct {
		name string
		cmd  *exec.Cmd // mnemo version
	}{
		{"go build -buildvcs=true", exec.Command(builtBinary(t), "version")},
		{"test binary", mnemoCommand(t, "version")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, err := exec.Command("go", "version", "-m", tt.cmd.Path).Output()
			if err != nil {
				t.Fatalf("go version -m: %v", err)
			}
			want := "no VCS information"
			for _, line := range strings.Split(string(meta), "\n") {
				if rev, ok := strings.CutPrefix(strings.TrimSpace(line), "build\tvcs.revision="); ok {
					want = "revision " + rev
				}
			}
			out, err := tt.cmd.Output()
			if err != nil || !strings.HasPrefix(string(out), "mnemo github.com/mnemodb/mnemo ") || !strings.Contains(string(out), want) {
				t.Errorf("mnemo version printed %q (%v); want %q", out, err, want)
			}
		})
	}
}
