//go:build amd64 && !purego

#include "textflag.h"

// func prefetchLines(p unsafe.Pointer, lines int)
//
// Issues PREFETCHT0 for lines consecutive 64-byte cache lines from p. A
// prefetch never faults, so an address past the end of an allocation is
// harmless; callers still pass only addresses inside their slice.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ lines+8(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	RET
