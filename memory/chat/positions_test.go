package chat

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/postgres"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

// positions returns the position of every stored content, by content.
func positions(t *testing.T, v *VectorMemory) map[string]int64 {
	t.Helper()
	pos := map[string]int64{}
	err := textvec.ScanPages(ctx, v.c.Get(), "", func(page []mnemo.Record) error {
		for _, r := range page {
			p, ok := r.Metadata[textvec.PosField].(float64)
			if !ok {
				return fmt.Errorf("%q has no position: %v", r.Content, r.Metadata)
			}
			pos[r.Content] = int64(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// TestPositionsTwoProcesses: this process and another (this test binary
// again, on the same PostgreSQL schema) add contents to one memory, one
// after the other and at once; no two contents get the same position,
// and together they hold positions 0..n-1.
func TestPositionsTwoProcesses(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	v := mustVector(t, memtest.OpenPG(t, dsn), nil)
	const each = 20
	mustAdd(t, v, "parent first") // this memory's first position, before the other process writes
	runPositionsWriter(t, dsn, "a", each)
	for i := range each {
		mustAdd(t, v, fmt.Sprintf("parent a%d", i))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range each {
			mustAdd(t, v, fmt.Sprintf("parent b%d", i))
		}
	}()
	runPositionsWriter(t, dsn, "b", each)
	<-done
	pos := positions(t, v)
	if len(pos) != 1+4*each {
		t.Fatalf("%d contents stored, want %d", len(pos), 1+4*each)
	}
	by := map[int64][]string{}
	for text, p := range pos {
		by[p] = append(by[p], text)
	}
	var wrong []string
	for p := range int64(len(pos)) {
		if texts := by[p]; len(texts) != 1 {
			slices.Sort(texts)
			wrong = append(wrong, fmt.Sprintf("%d: %q", p, texts))
		}
	}
	if len(wrong) > 0 {
		t.Fatalf("positions that do not hold one content: %s", strings.Join(wrong, ", "))
	}
}

// runPositionsWriter runs TestPositionsWriterProcess in another process,
// adding n contents named after round.
func runPositionsWriter(t *testing.T, dsn, round string, n int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPositionsWriterProcess$")
	cmd.Env = append(os.Environ(), "MNEMO_CHAT_POSITIONS_DSN="+dsn, "MNEMO_CHAT_POSITIONS_ROUND="+round, "MNEMO_CHAT_POSITIONS_N="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "added") {
		t.Fatalf("writing process: %v\n%s", err, out)
	}
}

// TestPositionsWriterProcess is the process TestPositionsTwoProcesses
// starts; run directly, it does nothing.
func TestPositionsWriterProcess(t *testing.T) {
	dsn := os.Getenv("MNEMO_CHAT_POSITIONS_DSN")
	if dsn == "" {
		t.Skip("the writing process of TestPositionsTwoProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("MNEMO_CHAT_POSITIONS_N"))
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := mustVector(t, s, nil)
	for i := range n {
		mustAdd(t, v, fmt.Sprintf("child %s%d", os.Getenv("MNEMO_CHAT_POSITIONS_ROUND"), i))
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, "added")
	w.Flush()
}
