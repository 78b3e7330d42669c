package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// commandEnv, set to 1 in the environment of a process started from the
// test binary, has TestMain run the mnemo command instead of the tests.
const commandEnv = "MNEMO_TEST_COMMAND"

// TestMain runs the tests or, in a process mnemoCommand starts, the mnemo
// command: main, with the process's arguments, standard streams and exit
// status, before the testing package has parsed a flag or installed
// anything, so the process behaves as a built binary does (main's
// handling of SIGINT and SIGTERM included; SIGKILL kills it). The tests
// that drive mnemo as a process thus build nothing. The one binary go
// build makes, for TestVersionOfBuiltBinary, is removed after the tests.
func TestMain(m *testing.M) {
	if os.Getenv(commandEnv) == "1" {
		main() // exits
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// mnemoCommand returns a command that runs mnemo with args in a process
// of its own: the test binary, which TestMain turns into mnemo.
func mnemoCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), commandEnv+"=1")
	return cmd
}

// built is the binary builtBinary makes, once per run of the tests, in a
// directory TestMain removes.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// builtBinary returns the path of mnemo as go build -buildvcs=true makes
// it, building it on the first call. Only a binary go build made can
// carry the VCS stamp: go test never stamps the test binary.
func builtBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "mnemo-test-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "mnemo")
		if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build -buildvcs=true: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// TestCommandProcess runs mnemo as the end-to-end tests do, in a process
// of the test binary, and checks that it behaves as the built binary: the
// exit status of each kind of outcome, and each standard stream holding
// only its own output (no word from the testing package).
func TestCommandProcess(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // prefix of standard output, "" for none
		stderr string // all of standard error
	}{
		{"success", []string{"help"}, 0, "mnemo: an embedded vector database", ""},
		{"failure", []string{"stats", "--db", missing}, 1, "", "mnemo stats: engine: no database: " + missing + "\n"},
		{"usage error", []string{"stats"}, 2, "", "mnemo stats: --db is required\nUsage: mnemo stats --db DIR [--json]\nRun \"mnemo help stats\" for its flags.\n"},
		{"a test flag is an argument", []string{"-test.run=^$"}, 2, "", "mnemo: unknown command \"-test.run=^$\"\n\n" + generalUsage()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := mnemoCommand(t, tt.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if !strings.HasPrefix(stdout.String(), tt.stdout) || tt.stdout == "" && stdout.Len() > 0 {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.stdout)
			}
			if stderr.String() != tt.stderr {
				t.Errorf("stderr %q\nwant %q", stderr.String(), tt.stderr)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{nil, 2, "Usage:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"help"}, 0, "mnemo demo"},
		{[]string{"demo", "--nope"}, 2, "mnemo demo: unknown flag --nope\nUsage: mnemo demo [--keep DIR]\n"},
		{[]string{"demo", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"demo", "--help"}, 0, "--keep DIR"},
		{[]string{"stats"}, 2, "mnemo stats: --db is required\n"},
		{[]string{"import", "--file", "x"}, 2, "mnemo import: --db and --collection are required\n"},
		{[]string{"backup", "--to", ""}, 2, "mnemo backup: --db and --to are required\n"},
		{[]string{"import", "--db", "x", "--collection", "c", "--batch", "0"}, 2, "mnemo import: --batch 0, want > 0\n"},
		{[]string{"import", "--db", "x", "--collection", "c", "--metric", "hamming"}, 2, `mnemo import: unknown metric "hamming"`},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(t.Context(), tt.args, &out, &errOut)
		all := out.String() + errOut.String()
		if code != tt.code || !strings.Contains(all, tt.out) {
			t.Errorf("mnemo %v: exit %d, output %q; want exit %d and %q", tt.args, code, all, tt.code, tt.out)
		}
		if strings.Contains(all, "goroutine ") {
			t.Errorf("mnemo %v printed a stack trace", tt.args)
		}
	}
}

// TestPanicIsInternalError checks that a panic in a command is reported as
// an internal error with exit status 3, its stack trace only on request.
func TestPanicIsInternalError(t *testing.T) {
	tests := []struct {
		name  string
		panic func()
		debug bool
		want  string
	}{
		{"value", func() { panic("boom") }, false, "mnemo crash: internal error: boom\n"},
		{"runtime error", func() { s := []int{}; _ = s[len(os.Args)] }, false, "internal error: runtime error: index out of range"},
		{"error value", func() { panic(os.ErrClosed) }, false, "internal error: file already closed"},
		{"MNEMO_DEBUG=1 keeps the trace", func() { panic("boom") }, true, "goroutine "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			commands["crash"] = func(context.Context, []string, io.Writer, io.Writer) error { tt.panic(); return nil }
			defer delete(commands, "crash")
			t.Setenv("MNEMO_DEBUG", "")
			if tt.debug {
				t.Setenv("MNEMO_DEBUG", "1")
			}
			var out, errOut bytes.Buffer
			code := run(t.Context(), []string{"crash"}, &out, &errOut)
			msg := errOut.String()
			if code != 3 || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "please report") {
				t.Errorf("exit %d, stderr %q; want exit 3, %q and a request to report it", code, msg, tt.want)
			}
			if !tt.debug && (strings.Contains(msg, "goroutine ") || strings.Count(msg, "\n") != 2) {
				t.Errorf("stderr %q: want two lines and no stack trace", msg)
			}
		})
	}
}
