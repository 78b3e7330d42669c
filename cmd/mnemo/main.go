// Command mnemo is mnemo's command-line tool.
//
//	mnemo demo [--keep DIR]    store and recall real memories through every adapter
//	mnemo import|export|get|query|stats|checkpoint|verify --db DIR ...
//
// Usage errors exit with status 2; other failures print one line and exit
// 1. A panic is reported as an internal error, exit status 3, with its
// stack trace only when MNEMO_DEBUG=1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// errUsage marks a usage error: the command has printed its usage.
var errUsage = errors.New("usage")

const usage = `mnemo: an embedded vector database and agent memory for Go

Usage:
  mnemo demo [--keep DIR]                         store and recall memories through every adapter
  mnemo import --db DIR --collection NAME [--dim N --metric M] [--file F] [--batch N] [--skip-bad]
  mnemo export --db DIR --collection NAME [--out FILE]
  mnemo get --db DIR --collection NAME ID...
  mnemo query --db DIR --collection NAME (--vector JSON | --text TEXT) [--k N] [--ef N] [--filter JSON]
  mnemo stats --db DIR
  mnemo checkpoint --db DIR [--collection NAME]
  mnemo verify --db DIR                           exit status 0 only when consistent
  mnemo backup --db DIR --to DIR2                 a consistent copy; restore is opening it
  mnemo compact --db DIR                          give the space of deleted records back
  mnemo bench ann (--base F --query F [--gt F] | --synthetic n=...,dim=...) [--metric M] [--k N]
                  [--ef 10,20,...] [--m N] [--efc N] [--backends hnsw,flat,coder] [--threads N] [--json F] [--svg F]
  mnemo help                                      this text

Run "mnemo COMMAND --help" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands maps each command name to the function that runs it with the
// arguments after the name.
var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"demo": demo,
	"import": func(args []string, stdout, stderr io.Writer) error {
		return importCmd(args, os.Stdin, stdout, stderr)
	},
	"export":     export,
	"get":        get,
	"query":      query,
	"stats":      stats,
	"checkpoint": checkpoint,
	"verify":     verify,
	"backup":     backup,
	"compact":    compact,
	"bench":      benchCmd,
}

// run executes a command line and returns the exit status: 0 on success,
// 1 on failure, 2 on a usage error, 3 on an internal error (a panic).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mnemo: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	crashed, err := protect(args[0], stderr, func() error { return cmd(args[1:], stdout, stderr) })
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
	case errors.Is(err, errInconsistent):
		return 1
	}
	fmt.Fprintf(stderr, "mnemo %s: %v\n", args[0], err)
	return 1
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

// newFlags returns a flag set that prints its usage to stderr and reports
// errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: mnemo %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// usageErr maps a flag parsing error to errUsage (help stays help).
func usageErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return errUsage
}

// parse parses args, mapping a bad flag to errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "mnemo %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}
