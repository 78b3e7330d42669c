package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version prints the module path and version and the VCS revision the
// binary was built from, as the Go toolchain recorded them.
func version(_ context.Context, args []string, out, stderr io.Writer) error {
	fs := newFlags("version", out, stderr)
	if err := fs.parse(args); err != nil {
		return err
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	_, err := io.WriteString(out, versionText(info))
	return err
}

// versionText describes the build info: the module and its version
// ("(devel)" when built from a checkout, a pseudo-version or tag when
// the toolchain derived one from VCS), the revision, its time and whether
// the checkout had uncommitted changes, and the Go toolchain. A build
// without VCS information (go build -buildvcs=false, or outside a
// checkout) says so; info is nil when the binary carries no build info.
func versionText(info *debug.BuildInfo) string {
	platform := fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH)
	if info == nil {
		return fmt.Sprintf("mnemo (devel)\nno build information in the binary\nbuilt with %s for %s\n", runtime.Version(), platform)
	}
	path, ver := info.Main.Path, info.Main.Version
	if path == "" {
		path = "github.com/mnemodb/mnemo"
	}
	if ver == "" {
		ver = "(devel)"
	}
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	s := fmt.Sprintf("mnemo %s %s\n", path, ver)
	if rev := vcs["vcs.revision"]; rev != "" {
		s += vcs["vcs"] + " revision " + rev
		if t := vcs["vcs.time"]; t != "" {
			s += ", committed " + t
		}
		switch vcs["vcs.modified"] {
		case "true":
			s += ", with uncommitted changes"
		case "false":
			s += ", clean"
		}
		s += "\n"
	} else {
		s += "no VCS information (built with -buildvcs=false, or outside a checkout)\n"
	}
	goVersion := info.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return s + fmt.Sprintf("built with %s for %s\n", goVersion, platform)
}

// moduleVersion returns the module's version as the build info records
// it, "(devel)" when it records none.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
