package index

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePagesOn reports whether slabs are worth carving: the kernel
// gives transparent huge pages to advised memory only ("madvise", the
// usual default), and the process has not turned them off for the Go heap
// with GODEBUG=disablethp=1. Under "always" the heap gets huge pages
// without advice, and under "never" advice does nothing.
var hugePagesOn = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(b), "[madvise]") {
		return false
	}
	on := true
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			on = v == "0" // the last setting wins, as in the runtime
		}
	}
	return on
})

// hugeOwners maps each 2 MiB page advised for huge pages to the slab that
// advised it last. A slab's advice outlives the slab: once the collector
// frees it, the Go heap reuses the range sparsely and returns the rest to
// the kernel, and khugepaged would then fill advised ranges back in with
// whole huge pages, growing the process's memory while it sits idle (the
// reason the Go runtime stopped advising its heap, golang/go#61718). So a
// slab's cleanup advises MADV_NOHUGEPAGE wherever it is still the owner;
// a page a later slab advised again is left alone.
var hugeOwners struct {
	sync.Mutex
	m    map[uintptr]uint64
	next uint64
}

// hugeSpan is the advised interior of a slab, the argument of its cleanup.
type hugeSpan struct {
	lo, n uintptr
	owner uint64
}

// adviseHugePages asks the kernel to back the 2 MiB-aligned interior of w,
// a new slab, with transparent huge pages (MADV_HUGEPAGE), and arranges
// for the advice to be taken back when the slab is collected. w is freshly
// allocated and still all zero, but the Go runtime may have zeroed reused
// memory and so faulted it in as small pages; MADV_DONTNEED drops those
// pages (their content is zero either way) so that the first write faults
// in a huge page. Errors are ignored: without the advice the index runs on
// small pages, only slower.
func adviseHugePages(w []uint32) {
	off, n := hugeRange(w)
	if n == 0 {
		return
	}
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(w)), off)
	b := unsafe.Slice((*byte)(p), n)
	if unix.Madvise(b, unix.MADV_HUGEPAGE) != nil {
		return
	}
	_ = unix.Madvise(b, unix.MADV_DONTNEED)
	span := hugeSpan{lo: uintptr(p), n: n}
	hugeOwners.Lock()
	hugeOwners.next++
	span.owner = hugeOwners.next
	if hugeOwners.m == nil {
		hugeOwners.m = make(map[uintptr]uint64)
	}
	for a := span.lo; a < span.lo+n; a += hugePage {
		hugeOwners.m[a] = span.owner
	}
	hugeOwners.Unlock()
	runtime.AddCleanup(unsafe.SliceData(w), unadviseHugePages, span)
}

// unadviseHugePages takes back the advice of a collected slab on the pages
// it still owns. MADV_NOHUGEPAGE only sets a flag on the range, so it is
// harmless to memory the heap has reused meanwhile.
func unadviseHugePages(s hugeSpan) {
	hugeOwners.Lock()
	defer hugeOwners.Unlock()
	for a := s.lo; a < s.lo+s.n; a += hugePage {
		if hugeOwners.m[a] != s.owner {
			continue
		}
		delete(hugeOwners.m, a)
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, a, hugePage, unix.MADV_NOHUGEPAGE)
	}
}
