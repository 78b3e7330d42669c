package index

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePagesSupported = true

// adviseHugePages asks the kernel to back the 2 MiB-aligned interior of w
// with transparent huge pages (MADV_HUGEPAGE; under the default "madvise"
// setting only advised memory gets them). w is freshly allocated and still
// all zero, but the Go runtime may have zeroed reused memory and so
// faulted it in as small pages; MADV_DONTNEED drops those pages (their
// content is zero either way) so that the first write faults in a huge
// page. Errors are ignored: a kernel without transparent huge pages, or
// with them disabled, leaves small pages, which is only slower.
func adviseHugePages(w []uint32) {
	off, n := hugeRange(w)
	if n == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(w)), off)), n)
	if unix.Madvise(b, unix.MADV_HUGEPAGE) == nil {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
