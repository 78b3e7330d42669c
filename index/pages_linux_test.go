package index

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestSlabsAdvised checks, in /proc/self/smaps, that the memory of a large
// index's chunks is advised for huge pages (VmFlags "hg"), whether or not
// the kernel then backs it with them.
func TestSlabsAdvised(t *testing.T) {
	h := buildSlabbed(t, true, NoQuantization, clustered(newRand(t, 5), 4000, 1024, 8))
	var probe uintptr // a 2 MiB boundary inside the last chunk's records
	for _, r := range *h.chunks.Load() {
		b := uintptr(unsafe.Pointer(unsafe.SliceData(r.ch.data)))
		e := b + 4*uintptr(len(r.ch.data))
		if p := (b + hugePage - 1) &^ (hugePage - 1); p < e {
			probe = p
		}
	}
	if probe == 0 {
		t.Fatal("no chunk spans a 2 MiB boundary")
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := vmaRange(line); ok {
			in = lo <= probe && probe < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			if !strings.Contains(line+" ", " hg ") {
				t.Fatalf("records at %#x: %s, want hg", probe, line)
			}
			return
		}
	}
	t.Fatalf("no mapping holds %#x", probe)
}

// vmaRange parses the address range of an smaps mapping header line.
func vmaRange(line string) (lo, hi uintptr, ok bool) {
	addr, _, found := strings.Cut(line, " ")
	a, b, dash := strings.Cut(addr, "-")
	if !found || !dash {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}
