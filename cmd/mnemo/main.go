// Command mnemo is mnemo's command-line tool.
//
//	mnemo demo [--keep DIR]    store and recall real memories through every adapter
//
// Usage errors exit with status 2; other failures print one line and exit 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// errUsage marks a usage error: the command has printed its usage.
var errUsage = errors.New("usage")

const usage = `mnemo: an embedded vector database and agent memory for Go

Usage:
  mnemo demo [--keep DIR]   store and recall memories through every adapter in an on-disk database
  mnemo help                this text

Run "mnemo COMMAND --help" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes a command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "demo":
		err = demo(args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mnemo: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "mnemo %s: %v\n", args[0], err)
	return 1
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
