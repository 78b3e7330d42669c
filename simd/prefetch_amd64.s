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

// func prefetchRows(rows *[]uint8, n int, lines int)
//
// Issues PREFETCHT0 for the first lines cache lines of each of n rows,
// given as consecutive slice headers.
TEXT ·prefetchRows(SB), NOSPLIT, $0-24
	MOVQ rows+0(FP), R8
	MOVQ n+8(FP), R9
	MOVQ lines+16(FP), DX
	TESTQ R9, R9
	JLE rdone
	TESTQ DX, DX
	JLE rdone
rrow:
	MOVQ (R8), AX
	MOVQ DX, CX
rline:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ rline
	ADDQ $24, R8
	DECQ R9
	JNZ rrow
rdone:
	RET
