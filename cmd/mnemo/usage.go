package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// usages holds each command's synopsis, a short line for the list of
// commands and a summary for its help, in the order "mnemo help" lists
// them. A synopsis names flags in the --flag style (Go's flag package
// accepts -flag and --flag alike; mnemo writes --flag everywhere, in
// usage, help and errors), puts optional flags in brackets and
// alternatives in parentheses, and names every flag the command has, with
// the value placeholder its flag help uses.
var usages = []usage{
	{"demo", "demo [--keep DIR]", "store and recall memories through every adapter",
		"Store and recall real memories through every adapter, in a temporary database unless --keep names a directory."},
	{"import", "import --db DIR --collection NAME [[--dim N] [--embedder NAME [--model NAME] [--embed-url URL]] [--metric M]] [--file FILE] [--batch N] [--skip-bad] [--content-ids] [--progress]", "read JSONL records into a collection",
		`Read JSONL records ({"id", "vector", "content", "metadata", "group", "position"}, one per line) and commit them in fsynced batches, printing "committed N" on standard output after each: the first N records are then durable. --dim, or --embedder (which sets the dimension), creates the collection (and the database) if it does not exist. A line without a vector is embedded from its content by the collection's embedder, which --embedder records: hashing (offline), or a model server, openai (any OpenAI-compatible server; the key in OPENAI_API_KEY) or ollama, with --model and --dim; a collection without one, or with a server the command line cannot reach (set OPENAI_BASE_URL and OPENAI_API_KEY, or OLLAMA_HOST, or --embed-url), needs a vector on every line. "group" (a string: the conversation or session the record belongs to) and "position" (an integer, its place in it, of magnitude below 2^53) are the record's place, kept in its metadata as mnemo.group and mnemo.pos, as the memory adapters keep a memory's: a query lifts the records next to a match in its group (see query --spread). A line with a position and no group is in group ""; a line with a group and no position gets the next position of the collection's sequence (the one the adapters number memories with), in line order (give a group's lines positions on all or none). Metadata that sets mnemo.group or mnemo.pos itself must agree with the line's group and position. A line without an id gets a new random one, so running an interrupted import again stores its committed records twice: resume after the last "committed N" (skip the first N records), or give such lines --content-ids, which makes the hash of the content their id, and a second run replaces what the first stored. Ctrl-C (SIGINT) or SIGTERM stops the import, even while it waits for input, and it says how many records were committed (as the last "committed N" did) and whether the batch in progress may have been written: only if its commit was under way; exit status 130.`},
	{"export", "export --db DIR --collection NAME [--out FILE]", "write a collection as JSONL",
		`Write a collection's records as JSONL, in id order, in the form import reads: a record's place (metadata mnemo.group, a string, and mnemo.pos, an integer) as "group" and "position".`},
	{"get", "get --db DIR --collection NAME ID...", "print records by id",
		"Print the records with the given ids as JSON."},
	{"query", "query --db DIR --collection NAME ([--vector JSON] [--text TEXT] | --queries FILE) [--mode MODE] [--k N] [--ef N] [--filter JSON] [--fusion METHOD] [--vector-weight W] [--depth N] [--spread W] [--spread-window N] [--json] [--skip-bad]", "the records best matching a text, a vector or both",
		`Print the k records best matching a query, best first: "score  id  content" per hit, or with --json one JSON line, {"id", "hits": [...]}. Modes: text ranks by BM25 over the full-text index; vector by nearness to the vector, or to the text's embedding; hybrid runs both and fuses them (by default as the engine does: weighted scores). A text is embedded only by the collection's recorded embedder, when the command line has it (the offline hashing one): then --text alone runs hybrid; otherwise text. --queries FILE answers one query per line, {"id": any, "text": "...", "vector": [...], "filter": {...}, "k": N} (id, filter and k optional; text or vector or both; a line's filter and k replace --filter and --k), with one JSON line each, in order. A hit is {"id", "score", "content"} plus, when the query had a vector, "distance" (the metric's raw distance) and "similarity"; "vector_rank" and "text_rank" (from 1) for the sides that found it; "text_score" (BM25) when the text side did; "metadata" when it has any; "group" and "position" when the record has a place (see import). The score is the similarity in vector mode, BM25 in text mode, the fused score in hybrid mode. In text and hybrid mode a query spreads as the memory adapters' queries do: a match passes --spread (default 0.5) of its score to the --spread-window (default 2) records on each side of it in its group, found or not, and the hits are ranked again; --spread 0 turns it off. A collection whose records have no place (no group and position) ranks as without spreading. A bad line stops the run (exit 1) after the answers before it, naming its line number; --skip-bad reports it on standard error and goes on.`},
	{"stats", "stats --db DIR [--json]", "the collections and their indexes",
		"Print the database's collections and the state of their indexes; with --json, one JSON object with stable field names (see docs/observability.md)."},
	{"checkpoint", "checkpoint --db DIR [--collection NAME]", "write index checkpoints",
		"Write index checkpoints: of every collection, or of --collection's."},
	{"verify", "verify --db DIR", "check consistency; exit status 0 only when consistent",
		"Check the database's consistency; exit status 0 only when it is consistent. On a database another process holds open, that process checks it, through its live access: each collection's writes wait while it is checked."},
	{"backup", "backup --db DIR --to DIR2", "a consistent copy; restore is opening it",
		"Write a consistent copy of the database; restoring is opening the copy. On a database another process holds open, that process writes the copy, through its live access, into DIR2's absolute path."},
	{"compact", "compact --db DIR", "give the space of deleted records back",
		"Give the space of deleted records back."},
	{"reembed", "reembed --db DIR --collection NAME --embedder NAME [--model NAME] [--dim N] [--embed-url URL] [--batch N] [--progress]", "move a collection to a new embedder",
		`Embed every record of a collection again with a new embedder (hashing, openai or ollama, as for import), into NAME.reembed, while the collection goes on serving; then put it in the collection's place in one commit, after a last pass during which writes to the collection wait. Records keep their ids, content and metadata. Interrupted (Ctrl-C, an error, a crash), it leaves the collection as it was; run the same command again to resume, embedding only what is missing or changed. Programs must then open the memory with the new embedder: the old one gets an embedder mismatch. Works on an embedded database and on PostgreSQL.`},
	{"bench ann", "bench ann (--base FILE --query FILE [--gt FILE] | --synthetic SPEC) [--metric M] [--k N] [--ef LIST] [--m N] [--efc N] [--backends LIST] [--quantize Q] [--threads N] [--queries N] [--json FILE] [--svg FILE] [--hnswlib FILE] [--progress]", "measure recall and queries/s of the index backends",
		"Measure the index backends on TEXMEX files or a synthetic set: build rate, memory, recall@k, queries/s and latency per ef."},
	{"mcp", "mcp --db DIR [--create] [--http ADDR [--allow-remote]] [--facts NAME] [--toolmem NAME] [--documents NAME] [--session NAME] [--prefix PREFIX]", "serve the memories as MCP tools",
		`Serve the agent memories in the database as tools of an MCP (Model Context Protocol) server: facts (facts_remember, facts_recall, facts_forget, facts_list), tool usage (tool_usage_store, tool_usage_retrieve), path-addressed documents shaped as Anthropic's memory tool (documents_view, documents_create, documents_str_replace, documents_insert, documents_delete, documents_rename, documents_search) and the stored conversations (history_sessions, history_search, history_read). The collections are the adapters' defaults, so an app using the adapters and this server share one memory (on the embedded engine not at once: one process opens a database directory at a time; on PostgreSQL, any number). It speaks on standard input and output (the client starts it) until the client closes standard input, or with --http serves streamable HTTP at http://ADDR/mcp; ADDR must be a loopback address unless --allow-remote, since the server has no authentication. A message over 16 MiB is refused. --db names an existing database unless --create. Ctrl-C (SIGINT) or SIGTERM stops it (exit status 130) after closing the database. See docs/mcp.md.`},
	{"version", "version", "the module version and VCS revision",
		"Print the module version and the VCS revision mnemo was built from."},
	{"help", "help [COMMAND]", "this text, or a command's usage and flags",
		"Print the list of commands, or a command's usage and flags."},
}

// A usage describes a command: its name ("bench ann" for a subcommand),
// its synopsis without the leading "mnemo ", a short line for the list of
// commands and a summary for its help.
type usage struct{ name, synopsis, short, summary string }

// synopsis returns the synopsis of the named command ("bench ann" for a
// subcommand). Every command has one: a missing one is a bug.
func synopsis(name string) string {
	for _, u := range usages {
		if u.name == name {
			return u.synopsis
		}
	}
	panic("mnemo: no usage for command " + name)
}

// generalUsage is the text of "mnemo help".
func generalUsage() string {
	var b strings.Builder
	b.WriteString("mnemo: an embedded vector database and agent memory for Go\n\nCommands:\n")
	for _, u := range usages {
		fmt.Fprintf(&b, "  %-11s %s\n", u.name, u.short)
	}
	b.WriteString("\nUsage:\n")
	for _, u := range usages {
		b.WriteString(wrapSynopsis("  mnemo ", u.synopsis))
	}
	b.WriteString("\nUsage errors exit with status 2, other failures with 1. Ctrl-C (SIGINT) or\n")
	b.WriteString("SIGTERM interrupts a command: it stops, closes the database, says what it had\n")
	b.WriteString("done and exits with 130; a second signal ends it at once.\n")
	b.WriteString("stats, verify, get, query, export and backup also work on a database another\n")
	b.WriteString("process of yours holds open: through that process's live access, with the\n")
	b.WriteString("same output (see docs/live-access.md).\n")
	b.WriteString("Run \"mnemo help COMMAND\" for a command's flags.\n")
	return b.String()
}

// wrapSynopsis returns prefix and synopsis s on lines of at most 80
// columns (a single longer group stays whole), breaking only between
// groups: never inside brackets or parentheses.
func wrapSynopsis(prefix, s string) string {
	var groups []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case ' ':
			if depth == 0 {
				groups = append(groups, s[start:i])
				start = i + 1
			}
		}
	}
	groups = append(groups, s[start:])
	indent := strings.Repeat(" ", len(prefix)+2)
	var b strings.Builder
	line := prefix + groups[0]
	for _, g := range groups[1:] {
		if len(line)+1+len(g) > 80 {
			b.WriteString(line + "\n")
			line = indent + g
			continue
		}
		line += " " + g
	}
	b.WriteString(line + "\n")
	return b.String()
}

// flagSet is a command's flag set. It prints its help and its errors
// itself, naming flags in the --flag style, and checks required flags.
type flagSet struct {
	*flag.FlagSet
	name           string   // "import", "bench ann"
	required       []string // in the order declared
	stdout, stderr io.Writer
}

// newFlags returns the flag set of the named command: help (-h, --help)
// goes to stdout, errors and usage after an error to stderr.
func newFlags(name string, stdout, stderr io.Writer) *flagSet {
	synopsis(name) // every command has a usage line
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors, in the --flag style
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, name: name, stdout: stdout, stderr: stderr}
}

// require marks flags that must be given a non-empty value. Their help
// says "(required)" and parse reports a missing one.
func (fs *flagSet) require(names ...string) {
	fs.required = append(fs.required, names...)
}

// isSet reports whether the flag name was given.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parse parses args, which must hold flags only.
func (fs *flagSet) parse(args []string) error {
	if err := fs.parseArgs(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.fail("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseArgs parses the flags at the start of args, leaving the rest in
// fs.Args(). Help prints the command's usage and flags on stdout and
// returns flag.ErrHelp; a bad or missing flag is reported on stderr with
// the usage line, and the result is errUsage.
func (fs *flagSet) parseArgs(args []string) error {
	err := fs.Parse(args)
	if err == flag.ErrHelp {
		fs.help(fs.stdout)
		return err
	}
	if err != nil {
		return fs.fail("%s", flagError(err))
	}
	var missing []string
	for _, n := range fs.required {
		if fs.Lookup(n).Value.String() == "" {
			missing = append(missing, "--"+n)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fs.fail("%s is required", missing[0])
	}
	last := len(missing) - 1
	return fs.fail("%s and %s are required", strings.Join(missing[:last], ", "), missing[last])
}

// fail reports a usage error of the command on stderr, with its usage
// line, and returns errUsage.
func (fs *flagSet) fail(format string, a ...any) error {
	fmt.Fprintf(fs.stderr, "mnemo %s: %s\n", fs.name, fmt.Sprintf(format, a...))
	fmt.Fprint(fs.stderr, wrapSynopsis("Usage: mnemo ", synopsis(fs.name)))
	fmt.Fprintf(fs.stderr, "Run \"mnemo help %s\" for its flags.\n", fs.name)
	return errUsage
}

// help prints the command's usage, summary and flags.
func (fs *flagSet) help(w io.Writer) {
	fmt.Fprint(w, wrapSynopsis("Usage: mnemo ", synopsis(fs.name)))
	for _, u := range usages {
		if u.name == fs.name {
			fmt.Fprintf(w, "\n%s\n", wrapText(u.summary, 80, ""))
		}
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n++; n == 1 {
			fmt.Fprint(w, "\nFlags:\n")
		}
		fmt.Fprint(w, flagHelp(f, slices.Contains(fs.required, f.Name)))
	})
}

// flagHelp describes one flag as flag.PrintDefaults does, but in the
// --flag style: "  --name VALUE" and an indented line of help that ends
// with "(required)" or the default, when it is not the zero value.
func flagHelp(f *flag.Flag, required bool) string {
	meta, usage := flag.UnquoteUsage(f)
	if isBool(f) {
		meta = ""
	}
	s := "  --" + f.Name
	if meta != "" {
		s += " " + meta
	}
	switch {
	case required:
		usage += " (required)"
	case f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false":
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	return s + "\n" + wrapText(usage, 72, "        ") + "\n"
}

// isBool reports whether f is a boolean flag (one given without a value).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// wrapText fills the words of s into lines of indent and at most width
// columns of text (a longer word stays whole).
func wrapText(s string, width int, in string) string {
	var b strings.Builder
	line := in
	for _, w := range strings.Fields(s) {
		if len(line) > len(in) && len(line)+1+len(w) > width+len(in) {
			b.WriteString(line + "\n")
			line = in
		}
		if len(line) > len(in) {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

// flagErrorStyle matches the "-name" of the flag package's parse errors.
var flagErrorStyle = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`^flag provided but not defined: -(.*)$`), "unknown flag --$1"},
	{regexp.MustCompile(`^flag needs an argument: -(.*)$`), "flag --$1 needs a value"},
	{regexp.MustCompile(`^(invalid (?:boolean )?value "(?:[^"\\]|\\.)*" for )(?:flag )?-([^:]*)(:.*)$`), "$1--$2$3"},
}

// flagError words a parse error of the flag package in the --flag style.
func flagError(err error) string {
	msg := err.Error()
	for _, s := range flagErrorStyle {
		if s.re.MatchString(msg) {
			return s.re.ReplaceAllString(msg, s.repl)
		}
	}
	return msg
}
