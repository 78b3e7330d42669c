//go:build amd64 && !purego

#include "textflag.h"

// The integer code kernels: dst[i] = sum of q[j]*rows[i][j] over j < d,
// q signed bytes, rows unsigned bytes, d a multiple of 16, exact in int32.
// Register use: DI dst, SI q, DX d, R8 the current row's slice header, R9
// rows left, R10 d rounded down to 64, BX the row's data, CX the index
// into the row. Each row starts loading the first two cache lines of the
// row four ahead, as the float row kernels do.

// REDUCEI32 adds the eight int32 lanes of Y0, stores the sum at (DI) and
// moves on to the next row (DI, R8, R9).
#define REDUCEI32 \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0x4e, X0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0xb1, X0, X1 \
	VPADDD       X1, X0, X0 \
	VMOVD        X0, (DI) \
	ADDQ         $4, DI \
	ADDQ         $24, R8 \
	DECQ         R9

// func dotCodesI8VNNI(dst *int32, q *int8, d int, rows *[]uint8, n int)
//
// VPDPBUSD multiplies 64 unsigned code bytes by 64 signed query bytes and
// adds each group of four products into an int32 lane. The last d%64
// bytes are read with a zeroing byte mask, which never touches the bytes
// it masks out.
TEXT ·dotCodesI8VNNI(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ rows+24(FP), R8
	MOVQ n+32(FP), R9
	MOVQ DX, CX
	ANDQ $63, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVQ AX, K1
	MOVQ DX, R10
	ANDQ $-64, R10

vRow:
	TESTQ R9, R9
	JE    vDone
	MOVQ  (R8), BX
	CMPQ  R9, $4
	JLE   vZero
	MOVQ  96(R8), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)

vZero:
	VPXORD Z0, Z0, Z0
	XORQ   CX, CX
	CMPQ   CX, R10
	JAE    vTail

v64:
	VMOVDQU64 (BX)(CX*1), Z4
	VPDPBUSD  (SI)(CX*1), Z4, Z0
	ADDQ      $64, CX
	CMPQ      CX, R10
	JB        v64

vTail:
	CMPQ      CX, DX
	JAE       vSum
	VMOVDQU8.Z (BX)(CX*1), K1, Z4
	VMOVDQU8.Z (SI)(CX*1), K1, Z5
	VPDPBUSD  Z5, Z4, Z0

vSum:
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD        Y1, Y0, Y0
	REDUCEI32
	JMP          vRow

vDone:
	VZEROUPPER
	RET

// func dotCodesI8AVX2(dst *int32, q *int8, d int, rows *[]uint8, n int)
//
// For CPUs without VNNI: 16 codes and 16 query bytes are widened to 16-bit
// words and VPMADDWD adds each pair of products into an int32 lane.
TEXT ·dotCodesI8AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ d+16(FP), DX
	MOVQ rows+24(FP), R8
	MOVQ n+32(FP), R9

aRow:
	TESTQ R9, R9
	JE    aDone
	MOVQ  (R8), BX
	CMPQ  R9, $4
	JLE   aZero
	MOVQ  96(R8), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)

aZero:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  CX, CX
	CMPQ  CX, DX
	JAE   aSum
	TESTQ $16, DX
	JE    a32
	VPMOVZXBW (BX), Y4
	VPMOVSXBW (SI), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y0, Y0
	MOVQ      $16, CX

a32:
	CMPQ      CX, DX
	JAE       aSum
	VPMOVZXBW (BX)(CX*1), Y4
	VPMOVSXBW (SI)(CX*1), Y5
	VPMOVZXBW 16(BX)(CX*1), Y6
	VPMOVSXBW 16(SI)(CX*1), Y7
	VPMADDWD  Y5, Y4, Y4
	VPMADDWD  Y7, Y6, Y6
	VPADDD    Y4, Y0, Y0
	VPADDD    Y6, Y1, Y1
	ADDQ      $32, CX
	JMP       a32

aSum:
	VPADDD       Y1, Y0, Y0
	REDUCEI32
	JMP          aRow

aDone:
	VZEROUPPER
	RET
