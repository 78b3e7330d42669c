//go:build amd64 && !purego

#include "textflag.h"

// tailMask holds eight all-ones words then eight zero words: the eight
// words from offset 8-r (in words) select the first r lanes of a YMM load.
DATA tailMask<>+0(SB)/8, $0xffffffffffffffff
DATA tailMask<>+8(SB)/8, $0xffffffffffffffff
DATA tailMask<>+16(SB)/8, $0xffffffffffffffff
DATA tailMask<>+24(SB)/8, $0xffffffffffffffff
DATA tailMask<>+32(SB)/8, $0
DATA tailMask<>+40(SB)/8, $0
DATA tailMask<>+48(SB)/8, $0
DATA tailMask<>+56(SB)/8, $0
GLOBL tailMask<>(SB), RODATA|NOPTR, $64

// Register use shared by both kernels:
//   DI dst, SI q, DX d, R8 the current row's slice header, R9 rows left,
//   R10 d rounded down to 32, R11 d rounded down to 8, BX the row's data,
//   CX the index into the row, Y0-Y3 accumulators, Y15 the tail mask.
// Each row starts loading the first four cache lines of the row four ahead
// (a prefetch never faults, so lines past a short row's end are harmless),
// so that on a graph larger than the cache the loads overlap the arithmetic.
// A row of d < 8 (or the last d%8 words of any row) is read with
// VMASKMOVPS, which never touches the masked-out words, so no load goes
// past the end of a row.
#define SETUP \
	MOVQ dst+0(FP), DI \
	MOVQ q+8(FP), SI \
	MOVQ d+16(FP), DX \
	MOVQ rows+24(FP), R8 \
	MOVQ n+32(FP), R9 \
	MOVQ DX, AX \
	ANDQ $7, AX \
	MOVQ $8, CX \
	SUBQ AX, CX \
	LEAQ tailMask<>(SB), BX \
	VMOVDQU (BX)(CX*4), Y15 \
	MOVQ DX, R10 \
	ANDQ $-32, R10 \
	MOVQ DX, R11 \
	ANDQ $-8, R11

// REDUCE adds Y0..Y3 horizontally and stores the sum at (DI).
#define REDUCE \
	VADDPS Y1, Y0, Y0 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y2, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VPERMILPD $1, X0, X1 \
	VADDPS X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS X1, X0, X0 \
	VMOVSS X0, (DI)

// func dotRowsAVX2(dst, q *float32, d int, rows *[]float32, n int)
TEXT ·dotRowsAVX2(SB), NOSPLIT, $0-40
	SETUP

dotRow:
	TESTQ R9, R9
	JE    dotDone
	MOVQ  (R8), BX
	CMPQ  R9, $4
	JLE   dotZero
	MOVQ  96(R8), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)

dotZero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ  CX, CX
	CMPQ  CX, R10
	JAE   dot8

dot32:
	VMOVUPS     (SI)(CX*4), Y4
	VMOVUPS     32(SI)(CX*4), Y5
	VMOVUPS     64(SI)(CX*4), Y6
	VMOVUPS     96(SI)(CX*4), Y7
	VFMADD231PS (BX)(CX*4), Y4, Y0
	VFMADD231PS 32(BX)(CX*4), Y5, Y1
	VFMADD231PS 64(BX)(CX*4), Y6, Y2
	VFMADD231PS 96(BX)(CX*4), Y7, Y3
	ADDQ        $32, CX
	CMPQ        CX, R10
	JB          dot32

dot8:
	CMPQ        CX, R11
	JAE         dotTail
	VMOVUPS     (SI)(CX*4), Y4
	VFMADD231PS (BX)(CX*4), Y4, Y1
	ADDQ        $8, CX
	CMPQ        CX, R11
	JAE         dotTail
	VMOVUPS     (SI)(CX*4), Y4
	VFMADD231PS (BX)(CX*4), Y4, Y2
	ADDQ        $8, CX
	CMPQ        CX, R11
	JAE         dotTail
	VMOVUPS     (SI)(CX*4), Y4
	VFMADD231PS (BX)(CX*4), Y4, Y3
	ADDQ        $8, CX

dotTail:
	CMPQ        CX, DX
	JAE         dotSum
	VMASKMOVPS  (SI)(CX*4), Y15, Y4
	VMASKMOVPS  (BX)(CX*4), Y15, Y5
	VFMADD231PS Y5, Y4, Y0

dotSum:
	REDUCE
	ADDQ $4, DI
	ADDQ $24, R8
	DECQ R9
	JMP  dotRow

dotDone:
	VZEROUPPER
	RET

// func l2SquaredRowsAVX2(dst, q *float32, d int, rows *[]float32, n int)
TEXT ·l2SquaredRowsAVX2(SB), NOSPLIT, $0-40
	SETUP

l2Row:
	TESTQ R9, R9
	JE    l2Done
	MOVQ  (R8), BX
	CMPQ  R9, $4
	JLE   l2Zero
	MOVQ  96(R8), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)

l2Zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ  CX, CX
	CMPQ  CX, R10
	JAE   l28

l232:
	VMOVUPS     (SI)(CX*4), Y4
	VMOVUPS     32(SI)(CX*4), Y5
	VMOVUPS     64(SI)(CX*4), Y6
	VMOVUPS     96(SI)(CX*4), Y7
	VSUBPS      (BX)(CX*4), Y4, Y4
	VSUBPS      32(BX)(CX*4), Y5, Y5
	VSUBPS      64(BX)(CX*4), Y6, Y6
	VSUBPS      96(BX)(CX*4), Y7, Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ        $32, CX
	CMPQ        CX, R10
	JB          l232

l28:
	CMPQ        CX, R11
	JAE         l2Tail
	VMOVUPS     (SI)(CX*4), Y4
	VSUBPS      (BX)(CX*4), Y4, Y4
	VFMADD231PS Y4, Y4, Y1
	ADDQ        $8, CX
	CMPQ        CX, R11
	JAE         l2Tail
	VMOVUPS     (SI)(CX*4), Y4
	VSUBPS      (BX)(CX*4), Y4, Y4
	VFMADD231PS Y4, Y4, Y2
	ADDQ        $8, CX
	CMPQ        CX, R11
	JAE         l2Tail
	VMOVUPS     (SI)(CX*4), Y4
	VSUBPS      (BX)(CX*4), Y4, Y4
	VFMADD231PS Y4, Y4, Y3
	ADDQ        $8, CX

l2Tail:
	CMPQ        CX, DX
	JAE         l2Sum
	VMASKMOVPS  (SI)(CX*4), Y15, Y4
	VMASKMOVPS  (BX)(CX*4), Y15, Y5
	VSUBPS      Y5, Y4, Y4
	VFMADD231PS Y4, Y4, Y0

l2Sum:
	REDUCE
	ADDQ $4, DI
	ADDQ $24, R8
	DECQ R9
	JMP  l2Row

l2Done:
	VZEROUPPER
	RET

// The AVX-512 row kernels: 64 floats a step in four accumulators, then
// steps of 16, then the last d%16 under the mask K1 (a masked load does not
// touch the masked-out words). Register use as in the AVX2 kernels, with
// Z0-Z3 the accumulators.
#define SETUP512 \
	MOVQ dst+0(FP), DI \
	MOVQ q+8(FP), SI \
	MOVQ d+16(FP), DX \
	MOVQ rows+24(FP), R8 \
	MOVQ n+32(FP), R9 \
	MOVQ DX, CX \
	ANDQ $15, CX \
	MOVQ $1, AX \
	SHLQ CX, AX \
	DECQ AX \
	KMOVW AX, K1 \
	MOVQ DX, R10 \
	ANDQ $-64, R10 \
	MOVQ DX, R11 \
	ANDQ $-16, R11

// REDUCE512 adds Z0..Z3 horizontally and stores the sum at (DI).
#define REDUCE512 \
	VADDPS Z1, Z0, Z0 \
	VADDPS Z3, Z2, Z2 \
	VADDPS Z2, Z0, Z0 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VPERMILPD $1, X0, X1 \
	VADDPS X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS X1, X0, X0 \
	VMOVSS X0, (DI)

// func dotRowsAVX512(dst, q *float32, d int, rows *[]float32, n int)
TEXT ·dotRowsAVX512(SB), NOSPLIT, $0-40
	SETUP512

d5Row:
	TESTQ R9, R9
	JE    d5Done
	MOVQ  (R8), BX
	CMPQ  R9, $4
	JLE   d5Zero
	MOVQ  96(R8), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)

d5Zero:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	XORQ  CX, CX
	CMPQ  CX, R10
	JAE   d516

d564:
	VMOVUPS     (SI)(CX*4), Z4
	VMOVUPS     64(SI)(CX*4), Z5
	VMOVUPS     128(SI)(CX*4), Z6
	VMOVUPS     192(SI)(CX*4), Z7
	VFMADD231PS (BX)(CX*4), Z4, Z0
	VFMADD231PS 64(BX)(CX*4), Z5, Z1
	VFMADD231PS 128(BX)(CX*4), Z6, Z2
	VFMADD231PS 192(BX)(CX*4), Z7, Z3
	ADDQ        $64, CX
	CMPQ        CX, R10
	JB          d564

d516:
	CMPQ        CX, R11
	JAE         d5Tail
	VMOVUPS     (SI)(CX*4), Z4
	VFMADD231PS (BX)(CX*4), Z4, Z1
	ADDQ        $16, CX
	JMP         d516

d5Tail:
	CMPQ        CX, DX
	JAE         d5Sum
	VMOVUPS.Z   (SI)(CX*4), K1, Z4
	VMOVUPS.Z   (BX)(CX*4), K1, Z5
	VFMADD231PS Z5, Z4, Z0

d5Sum:
	REDUCE512
	ADDQ $4, DI
	ADDQ $24, R8
	DECQ R9
	JMP  d5Row

d5Done:
	VZEROUPPER
	RET

// func l2SquaredRowsAVX512(dst, q *float32, d int, rows *[]float32, n int)
TEXT ·l2SquaredRowsAVX512(SB), NOSPLIT, $0-40
	SETUP512

l5Row:
	TESTQ R9, R9
	JE    l5Done
	MOVQ  (R8), BX
	CMPQ  R9, $4
	JLE   l5Zero
	MOVQ  96(R8), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)

l5Zero:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	XORQ  CX, CX
	CMPQ  CX, R10
	JAE   l516

l564:
	VMOVUPS     (SI)(CX*4), Z4
	VMOVUPS     64(SI)(CX*4), Z5
	VMOVUPS     128(SI)(CX*4), Z6
	VMOVUPS     192(SI)(CX*4), Z7
	VSUBPS      (BX)(CX*4), Z4, Z4
	VSUBPS      64(BX)(CX*4), Z5, Z5
	VSUBPS      128(BX)(CX*4), Z6, Z6
	VSUBPS      192(BX)(CX*4), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $64, CX
	CMPQ        CX, R10
	JB          l564

l516:
	CMPQ        CX, R11
	JAE         l5Tail
	VMOVUPS     (SI)(CX*4), Z4
	VSUBPS      (BX)(CX*4), Z4, Z4
	VFMADD231PS Z4, Z4, Z1
	ADDQ        $16, CX
	JMP         l516

l5Tail:
	CMPQ        CX, DX
	JAE         l5Sum
	VMOVUPS.Z   (SI)(CX*4), K1, Z4
	VMOVUPS.Z   (BX)(CX*4), K1, Z5
	VSUBPS      Z5, Z4, Z4
	VFMADD231PS Z4, Z4, Z0

l5Sum:
	REDUCE512
	ADDQ $4, DI
	ADDQ $24, R8
	DECQ R9
	JMP  l5Row

l5Done:
	VZEROUPPER
	RET
