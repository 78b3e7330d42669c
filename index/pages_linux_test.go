package index

import (
	"bufio"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSlabsAdvised checks, in /proc/self/smaps, that the memory of a large
// index's chunks is advised for huge pages (VmFlags "hg"), whether or not
// the kernel then backs it with them.
func TestSlabsAdvised(t *testing.T) {
	if !hugePagesOn() {
		t.Skip("the kernel does not take huge page advice here")
	}
	h := buildSlabbed(t, true, NoQuantization, clustered(newRand(t, 5), 4000, 1024, 8))
	var probe uintptr // a 2 MiB page a slab advised, inside a chunk's records
	hugeOwners.Lock()
	for _, r := range *h.chunks.Load() {
		b := uintptr(unsafe.Pointer(unsafe.SliceData(r.ch.data)))
		e := b + 4*uintptr(len(r.ch.data))
		if p := hugeUp(b); p < e && hugeOwners.m[p] != 0 {
			probe = p
		}
	}
	hugeOwners.Unlock()
	if probe == 0 {
		t.Fatal("no chunk's records are on an advised page")
	}
	if f := vmFlags(t, probe); !f["hg"] {
		t.Fatalf("records at %#x: VmFlags %v, want hg", probe, f)
	}
	runtime.KeepAlive(h)
}

// TestSlabsUnadvised checks that a collected slab's advice is taken back
// (VmFlags "nh", so that khugepaged does not fill the range the heap
// reuses with huge pages), but not on a page another slab advised since.
func TestSlabsUnadvised(t *testing.T) {
	if !hugePagesOn() {
		t.Skip("the kernel does not take huge page advice here")
	}
	s := &slabs{held: slabMinBytes}
	probe := hugeUp(uintptr(unsafe.Pointer(unsafe.SliceData(s.words(1<<16, 1<<16)))))
	if f := vmFlags(t, probe); !f["hg"] {
		t.Fatalf("new slab at %#x: VmFlags %v, want hg", probe, f)
	}
	// A cleanup that does not own the page changes nothing.
	hugeOwners.Lock()
	owner := hugeOwners.m[probe]
	hugeOwners.Unlock()
	unadviseHugePages(hugeSpan{lo: probe, n: hugePage, owner: owner + 1})
	if f := vmFlags(t, probe); !f["hg"] {
		t.Fatalf("after a stale cleanup: VmFlags %v, want hg", f)
	}
	runtime.KeepAlive(s)
	s = nil
	for range 100 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if f := vmFlags(t, probe); f["nh"] && !f["hg"] {
			return
		}
	}
	t.Fatalf("collected slab at %#x: VmFlags %v, want nh", probe, vmFlags(t, probe))
}

// vmFlags returns the VmFlags of the mapping holding addr, from
// /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) map[string]bool {
	t.Helper()
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
			in = lo <= addr && addr < hi
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			m := map[string]bool{}
			for _, fl := range strings.Fields(flags) {
				m[fl] = true
			}
			return m
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
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

// BenchmarkRandomLoads measures what huge pages save a dependent random
// read on this host: a pointer chase over a cycle through every cache
// line of 512 MiB, once in memory advised MADV_NOHUGEPAGE and once in
// memory advised MADV_HUGEPAGE (as adviseHugePages does). ns/op is one
// load. Run by hand: it allocates 1 GiB.
func BenchmarkRandomLoads(b *testing.B) {
	const words = 512 << 20 / 4
	for _, c := range []struct {
		name   string
		advice int
	}{{"4KiB", unix.MADV_NOHUGEPAGE}, {"2MiB", unix.MADV_HUGEPAGE}} {
		buf := make([]uint32, words+hugePage/4)
		off, _ := hugeRange(buf)
		w := buf[off/4 : off/4+words]
		if err := unix.Madvise(bytesOf(w), c.advice); err != nil {
			b.Skipf("madvise: %v", err)
		}
		_ = unix.Madvise(bytesOf(w), unix.MADV_DONTNEED)
		r := rand.New(rand.NewPCG(1, 2))
		lines := r.Perm(words / 16)
		for i, l := range lines {
			w[l*16] = uint32(lines[(i+1)%len(lines)] * 16)
		}
		b.Run(c.name, func(b *testing.B) {
			p := uint32(0)
			for range b.N {
				p = w[p]
			}
			sink = p
		})
	}
}

var sink uint32
