// Command mnemo is mnemo's command-line tool.
//
//	mnemo demo [--keep DIR]    store and recall real memories through every adapter
//	mnemo import|export|get|query|stats|checkpoint|verify|backup|compact --db DIR ...
//	mnemo bench ann ...        measure the index backends
//	mnemo mcp --db DIR ...     the memories as an MCP server (stdio, or --http)
//	mnemo version              the module version and VCS revision
//	mnemo help [COMMAND]       the commands, or one command's usage and flags
//
// Flags are written --flag (Go's flag package accepts -flag too). Usage
// errors exit with status 2; other failures print one line and exit 1. A
// panic is reported as an internal error, exit status 3, with its stack
// trace only when MNEMO_DEBUG=1.
//
// SIGINT (Ctrl-C) or SIGTERM interrupts a command: it stops at its next
// step (a call to the database, a line of input, even one it waits for),
// closes the database (the engine's DB.Close; a PostgreSQL Store's Close,
// after the call in flight asked the server to cancel it), prints
// "mnemo COMMAND: interrupted" on one line, with what it had done where
// the command says (import: the records committed), and exits with
// status 130, for either signal. A second signal ends the process at
// once, as if mnemo handled none: a command that is opening an engine
// database for writing (replaying its log) or closing one finishes that
// before it stops; one opening it for reading stops at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// errUsage marks a usage error: the command has printed what was wrong and
// its usage.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the default behaviour again: a second signal ends the process at once
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// commands maps each command name to the function that runs it with the
// arguments after the name. Each has a line in usages. A command stops,
// and returns an error, once ctx is done (see run).
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"demo": demo,
	"import": func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return importCmd(ctx, args, os.Stdin, stdout, stderr)
	},
	"export": export,
	"get":    get,
	"query": func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return queryCmd(ctx, args, os.Stdin, stdout, stderr)
	},
	"stats":      stats,
	"checkpoint": checkpoint,
	"verify":     verify,
	"backup":     backup,
	"compact":    compact,
	"reembed":    reembedCmd,
	"bench":      benchCmd,
	"mcp": func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return mcpCmd(ctx, args, os.Stdin, stdout, stderr)
	},
	"version": version,
}

// run executes a command line and returns the exit status: 0 on success,
// 1 on failure, 2 on a usage error, 3 on an internal error (a panic),
// exitInterrupted when the command failed once ctx was done: main's ctx
// is done when a signal came, and every failure after it counts as the
// interruption, reported on one line (see interruptedError).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, generalUsage())
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, generalUsage())
		return 0
	case "--version", "-version":
		args = []string{"version"}
	case "help":
		return help(ctx, args[1:], stdout, stderr)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mnemo: unknown command %q\n\n%s", args[0], generalUsage())
		return 2
	}
	crashed, err := protect(args[0], stderr, func() error { return cmd(ctx, args[1:], stdout, stderr) })
	switch {
	case crashed:
		return 3
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		if err != errUsage {
			fmt.Fprintf(stderr, "mnemo %s: %v\n", args[0], err)
		}
		return 2
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "mnemo %s: %s\n", args[0], interruption(err))
		return exitInterrupted
	case errors.Is(err, errInconsistent):
		return 1
	}
	fmt.Fprintf(stderr, "mnemo %s: %v\n", args[0], err)
	return 1
}

// help runs "mnemo help [COMMAND [SUBCOMMAND]]": the general usage, or the
// usage and flags of a command, which it prints by running the command
// with --help.
func help(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, generalUsage())
		return 0
	case args[0] == "help":
		fmt.Fprint(stdout, wrapSynopsis("Usage: mnemo ", synopsis("help")))
		return 0
	case len(args) > 2 || len(args) == 2 && args[0] != "bench":
		fmt.Fprintf(stderr, "mnemo help: want one command, got %q\n", args)
		return 2
	case commands[args[0]] == nil:
		fmt.Fprintf(stderr, "mnemo help: unknown command %q\n\n%s", args[0], generalUsage())
		return 2
	}
	return run(ctx, append(args[:len(args):len(args)], "--help"), stdout, stderr)
}

// protect runs f and returns its error. If f panics, protect reports the
// panic on stderr as an internal error of command name, with a request to
// report it (and the stack trace when MNEMO_DEBUG=1), and crashed is true.
// A panic in a goroutine f started is not caught.
func protect(name string, stderr io.Writer, f func() error) (crashed bool, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		crashed = true
		fmt.Fprintf(stderr, "mnemo %s: internal error: %s\n", name, oneLine(fmt.Sprint(v), 500))
		if os.Getenv("MNEMO_DEBUG") == "1" {
			stderr.Write(debug.Stack())
		}
		fmt.Fprintln(stderr, "mnemo: this is a bug in mnemo; please report it with the command line (MNEMO_DEBUG=1 prints the stack trace)")
	}()
	return false, f()
}
