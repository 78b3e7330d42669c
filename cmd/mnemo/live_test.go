//go:build linux || darwin

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// holderEnv names, in the environment of a process started from the
// test binary, the database directory TestHelperHolder holds.
const holderEnv = "MNEMO_TEST_HOLD"

// TestHelperHolder is not a test: in a process startHolder starts, it
// holds the database in $MNEMO_TEST_HOLD (live access off when
// MNEMO_TEST_NOLIVE=1) and writes records r000000, r000001, ... in
// order into collection seq, one Upsert each. After the first 200 and a
// checkpoint of them it prints "ready"; it stops writing at the line
// "stop" on standard input (printing "stopped N") and closes the
// database and exits at the end of its input.
func TestHelperHolder(t *testing.T) {
	dir := os.Getenv(holderEnv)
	if dir == "" {
		t.Skip("a helper process of TestLive*")
	}
	var err error
	if os.Getenv("MNEMO_TEST_READONLY") == "1" {
		err = holdReadOnly(dir)
	} else {
		err = hold(dir, os.Getenv("MNEMO_TEST_NOLIVE") == "1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// holdReadOnly opens the database in dir for reading only, as mnemo's
// read commands do, prints "ready" and closes it at the end of input.
func holdReadOnly(dir string) error {
	db, err := engine.Open(dir, &engine.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	return db.Close()
}

func seqRecord(i int) mnemo.Record {
	return mnemo.Record{
		ID:       fmt.Sprintf("r%06d", i),
		Vector:   []float32{1, float32(i%7 + 1), float32(i % 13), float32(i % 5)},
		Content:  fmt.Sprintf("record %d of the %s sequence", i, []string{"red", "green", "blue"}[i%3]),
		Metadata: map[string]any{"i": i, "color": []string{"red", "green", "blue"}[i%3]},
	}
}

func hold(dir string, noLive bool) error {
	ctx := context.Background()
	db, err := engine.Open(dir, &engine.Options{NoSync: true, NoLiveAccess: noLive})
	if err != nil {
		return err
	}
	c, err := db.CreateCollection(ctx, "seq", mnemo.CollectionConfig{Dimension: 4})
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "stop" {
				close(stop)
				<-done
			}
		}
		select {
		case <-stop:
		default:
			close(stop)
			<-done
		}
		if err := db.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}()
	for i := 0; ; i++ {
		select {
		case <-stop:
			fmt.Printf("stopped %d\n", i)
			close(done)
			select {} // the goroutine reading standard input ends the process
		default:
		}
		if _, err := c.Upsert(ctx, seqRecord(i)); err != nil {
			return err
		}
		if i == 199 {
			if err := c.Checkpoint(ctx); err != nil {
				return err
			}
			fmt.Println("ready")
		}
		if i >= 200 {
			time.Sleep(200 * time.Microsecond)
		}
	}
}

// holder is a process that holds a database.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startHolder starts a process holding the database in dir and waits for
// it to be ready.
func startHolder(t *testing.T, dir string, noLive bool, env ...string) *holder {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperHolder$")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	if noLive {
		cmd.Env = append(cmd.Env, "MNEMO_TEST_NOLIVE=1")
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line := h.line(t); line != "ready" {
		t.Fatalf("holder says %q", line)
	}
	return h
}

func (h *holder) line(t *testing.T) string {
	t.Helper()
	s, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	return strings.TrimSpace(s)
}

// stop stops the writes and returns how many records were written.
func (h *holder) stop(t *testing.T) int {
	t.Helper()
	fmt.Fprintln(h.stdin, "stop")
	line := h.line(t)
	n, err := strconv.Atoi(strings.TrimPrefix(line, "stopped "))
	if err != nil {
		t.Fatalf("holder says %q", line)
	}
	return n
}

// close closes the database and waits for the process.
func (h *holder) close(t *testing.T) {
	t.Helper()
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
}

// mnemoRun runs a command in this process and returns its exit status
// and output.
func mnemoRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// checkPrefix checks that ids (in order) are r000000 .. r(n-1) with no
// hole, and returns n.
func checkPrefix(t *testing.T, what string, ids []string) int {
	t.Helper()
	for i, id := range ids {
		if want := fmt.Sprintf("r%06d", i); id != want {
			t.Fatalf("%s: record %d is %s, want %s: not one point in time", what, i, id, want)
		}
	}
	return len(ids)
}

func exportedIDs(t *testing.T, jsonl string) []string {
	t.Helper()
	var ids []string
	for l := range strings.SplitSeq(strings.TrimSpace(jsonl), "\n") {
		var r jsonRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("export line %q: %v", l, err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// TestLiveCommands runs stats, verify, get, query, export and backup on a
// database another process holds and writes to: they answer through its
// live access, a backup holds the records of one moment and opens from
// its checkpoint plus the log, and once the writes stop the answers are
// byte for byte those of a direct open.
func TestLiveCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	h := startHolder(t, dir, false)

	code, out, errOut := mnemoRun(t, "stats", "--db", dir)
	stats := regexp.MustCompile(`^database [0-9a-f-]{36}, opened in \S+, \d+ bytes on disk\nseq: \d+ records, dimension 4, cosine, hnsw index \(\d+ bytes, 0 tombstones\), \d+ log records, last checkpoint at seq 200, opened by empty\n$`)
	if code != 0 || !stats.MatchString(out) {
		t.Fatalf("stats: exit %d\n%s%s", code, out, errOut)
	}
	// stats --json through the holder: the same numbers as a machine reads them.
	code, out, errOut = mnemoRun(t, "stats", "--db", dir, "--json")
	var js struct {
		Backend     string `json:"backend"`
		Collections []struct {
			Name    string `json:"name"`
			Records int    `json:"records"`
		} `json:"collections"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || js.Backend != "engine" || len(js.Collections) != 1 || js.Collections[0].Name != "seq" || js.Collections[0].Records < 200 {
		t.Fatalf("stats --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	code, out, errOut = mnemoRun(t, "query", "--db", dir, "--collection", "seq", "--vector", "[1,2,3,4]", "--k", "3")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("query: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = mnemoRun(t, "export", "--db", dir, "--collection", "seq")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	if n := checkPrefix(t, "export", exportedIDs(t, out)); n < 200 || errOut != fmt.Sprintf("exported %d records\n", n) {
		t.Fatalf("export: %d records, %q", n, errOut)
	}
	if code, out, errOut = mnemoRun(t, "verify", "--db", dir); code != 0 || out != "ok: 1 collections consistent\n" {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}

	// A backup while the writes go on is one moment of the database.
	for i := range 3 {
		to := filepath.Join(t.TempDir(), "copy")
		code, out, errOut = mnemoRun(t, "backup", "--db", dir, "--to", to)
		if code != 0 || !strings.HasPrefix(out, "backed up "+dir+" to "+to+" in ") {
			t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
		}
		db, err := engine.Open(to, &engine.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.Collection("seq")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for after := ""; ; {
			page, next, err := c.Scan(t.Context(), after, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				ids = append(ids, r.ID)
			}
			if next == "" {
				break
			}
			after = next
		}
		n := checkPrefix(t, "backup", ids)
		st, err := db.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if cs := st.Collections[0]; n < 200 || cs.Records != n || cs.OpenedBy != "checkpoint+replay" || cs.ReplayedRecords != n-200 {
			t.Fatalf("backup %d: %d records; stats %+v", i, n, cs)
		}
		db.Close()
	}
	// Relative --to is the holder's business only in absolute form.
	to := filepath.Join(t.TempDir(), "rel")
	t.Chdir(filepath.Dir(to))
	if code, _, errOut = mnemoRun(t, "backup", "--db", dir, "--to", "rel"); code != 0 {
		t.Fatalf("backup --to rel: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(to, "MNEMO")); err != nil {
		t.Fatal(err)
	}

	// Once the writes stop, live answers are those of a direct open.
	n := h.stop(t)
	reads := [][]string{
		{"get", "--db", dir, "--collection", "seq", "r000000", "r000150", fmt.Sprintf("r%06d", n-1)},
		{"query", "--db", dir, "--collection", "seq", "--vector", "[1,2,3,4]", "--k", "7", "--json"},
		{"query", "--db", dir, "--collection", "seq", "--vector", "[4,3,2,1]", "--k", "5", "--filter", `{"color": "blue"}`},
		{"query", "--db", dir, "--collection", "seq", "--text", "green sequence", "--k", "5", "--json"},
		{"query", "--db", dir, "--collection", "seq", "--text", "record 17", "--vector", "[1,1,1,1]", "--mode", "hybrid", "--fusion", "rrf", "--json"},
		{"export", "--db", dir, "--collection", "seq"},
		{"get", "--db", dir, "--collection", "seq", "missing"},
		{"query", "--db", dir, "--collection", "nope", "--vector", "[1,2,3,4]"},
	}
	live := make([]string, len(reads))
	for i, args := range reads {
		code, out, errOut := mnemoRun(t, args...)
		live[i] = fmt.Sprintf("exit %d\n%s\n%s", code, out, errOut)
	}
	liveStats := mnemoRun3(t, "stats", "--db", dir)
	h.close(t)
	if _, err := os.Lstat(filepath.Join(dir, "live.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket after the holder closed: %v", err)
	}
	for i, args := range reads {
		code, out, errOut := mnemoRun(t, args...)
		if direct := fmt.Sprintf("exit %d\n%s\n%s", code, out, errOut); direct != live[i] {
			t.Errorf("%v:\nlive:\n%s\ndirect:\n%s", args, live[i], direct)
		}
	}
	// stats says the same things; the holder's figures of its own open
	// are its own.
	digits := regexp.MustCompile(`\d+(\.\d+)?(µs|ms|s)?|opened by \S+`)
	if direct := mnemoRun3(t, "stats", "--db", dir); digits.ReplaceAllString(direct, "#") != digits.ReplaceAllString(liveStats, "#") {
		t.Errorf("stats:\nlive:\n%s\ndirect:\n%s", liveStats, direct)
	}
}

func mnemoRun3(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := mnemoRun(t, args...)
	return fmt.Sprintf("exit %d\n%s\n%s", code, out, errOut)
}

// TestLiveHolderKilled checks that once the holder is killed (its socket
// left behind), the commands open the database directly.
func TestLiveHolderKilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	h := startHolder(t, dir, false)
	if code, _, errOut := mnemoRun(t, "stats", "--db", dir); code != 0 {
		t.Fatal(errOut)
	}
	h.cmd.Process.Kill()
	h.cmd.Wait()
	if _, err := os.Lstat(filepath.Join(dir, "live.sock")); err != nil {
		t.Fatalf("the killed holder's socket: %v", err)
	}
	for _, args := range [][]string{
		{"stats", "--db", dir},
		{"verify", "--db", dir},
		{"export", "--db", dir, "--collection", "seq"},
		{"query", "--db", dir, "--collection", "seq", "--vector", "[1,2,3,4]"},
		{"backup", "--db", dir, "--to", filepath.Join(t.TempDir(), "copy")},
	} {
		if code, out, errOut := mnemoRun(t, args...); code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// A process that holds it read-only serves no live access; the
	// killed holder's socket is not taken for one.
	ro := startHolder(t, dir, false, "MNEMO_TEST_READONLY=1")
	code, out, errOut := mnemoRun(t, "stats", "--db", dir)
	if code != 1 || out != "" || !strings.Contains(errOut, fmt.Sprintf("process %d holds %s without serving live access", ro.cmd.Process.Pid, dir)) {
		t.Fatalf("stats beside a read-only holder: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	ro.close(t)
}

// TestLiveOff checks the error of a database whose holder turned live
// access off: the holder's pid, and why there is no live access.
func TestLiveOff(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	h := startHolder(t, dir, true)
	pid := h.cmd.Process.Pid
	for _, args := range [][]string{
		{"stats", "--db", dir},
		{"verify", "--db", dir},
		{"get", "--db", dir, "--collection", "seq", "r000001"},
		{"export", "--db", dir, "--collection", "seq"},
		{"query", "--db", dir, "--collection", "seq", "--vector", "[1,2,3,4]"},
		{"backup", "--db", dir, "--to", filepath.Join(t.TempDir(), "copy")},
	} {
		code, out, errOut := mnemoRun(t, args...)
		want := fmt.Sprintf("mnemo %s: engine: database is already open: %s is open in process %d (engine: no live access: process %d holds %s without serving live access (turned off with Options.NoLiveAccess, opened read-only, or a mnemo without it))\n", args[0], dir, pid, pid, dir)
		if code != 1 || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q\nstderr %q\nwant   %q", args, code, out, errOut, want)
		}
	}
}

// TestLiveForgedSocket plants a socket in the directory of a database
// whose holder serves no live access: one that claims the holder's pid
// and the database's id. The commands refuse it: the kernel says another
// process serves it.
func TestLiveForgedSocket(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	h := startHolder(t, dir, true)
	pid := h.cmd.Process.Pid
	b, err := os.ReadFile(filepath.Join(dir, "MNEMO"))
	if err != nil {
		t.Fatal(err)
	}
	var ident struct{ ID string }
	json.Unmarshal(b, &ident)
	ln, err := net.Listen("unix", filepath.Join(dir, "live.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(filepath.Join(dir, "live.sock"), 0o600)
	served := make(chan string, 100)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served <- r.URL.Path
		fmt.Fprintf(w, `{"pid": %d, "id": %q, "dir": %q}`, pid, ident.ID, dir)
	}))
	code, out, errOut := mnemoRun(t, "stats", "--db", dir)
	if code != 1 || out != "" || !strings.Contains(errOut, fmt.Sprintf("is served by process %d, but process %d holds the database: refused", os.Getpid(), pid)) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	select {
	case p := <-served:
		t.Fatalf("the client sent %s to the forged socket", p)
	default:
	}
}

// TestLiveOtherUser checks, as root, that a process of another user
// (nobody) cannot use a database's live access: the socket's mode
// refuses its connect, and with the mode opened, the holder drops its
// connection unanswered and the client refuses the socket.
func TestLiveOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	if os.Getenv("MNEMO_TEST_DIAL") != "" {
		t.Skip("a helper of TestLiveOtherUser")
	}
	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755) // the test's own directory
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "db")
	startHolder(t, dir, false)
	os.Chmod(dir, 0o755)
	sock := filepath.Join(dir, "live.sock")
	// The test binary, where nobody may run it.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "mnemo.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(mode string) string {
		cmd := exec.Command(bin, "-test.run=^TestDialHelper$")
		cmd.Env = append(os.Environ(), "MNEMO_TEST_DIAL="+mode+":"+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return fmt.Sprintf("%s(%v)", out, err)
	}
	if out := asNobody("raw"); !strings.Contains(out, "connect: permission denied") {
		t.Fatalf("connect as nobody to the 0600 socket: %s", out)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	if out := asNobody("raw"); !strings.Contains(out, "no answer") {
		t.Fatalf("a request as nobody on an open socket: %s", out)
	}
	if out := asNobody("live"); !strings.Contains(out, "no live access") || !strings.Contains(out, "untrusted peer") {
		t.Fatalf("DialLive as nobody: %s", out)
	}
}

// TestDialHelper is not a test: in a process TestLiveOtherUser starts as
// another user, it reaches the live access of a database and prints
// what happened.
func TestDialHelper(t *testing.T) {
	spec := os.Getenv("MNEMO_TEST_DIAL")
	if spec == "" {
		t.Skip("a helper of TestLiveOtherUser")
	}
	mode, dir, _ := strings.Cut(spec, ":")
	switch mode {
	case "raw":
		c, err := net.Dial("unix", filepath.Join(dir, "live.sock"))
		if err != nil {
			fmt.Println(err)
			os.Exit(0)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprint(c, "POST /v1/identity HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
		b, _ := io.ReadAll(c)
		if len(b) == 0 {
			fmt.Println("no answer")
		} else {
			fmt.Printf("answer: %s\n", b)
		}
	case "live":
		_, err := engine.DialLive(context.Background(), dir)
		fmt.Println(err)
	}
	os.Exit(0)
}
