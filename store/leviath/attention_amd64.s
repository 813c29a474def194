#include "textflag.h"

// func attentionAVX2(b []byte) int
//
// The index of b's first backslash or byte below 0x20 (len(b): none), 64
// bytes a step: a byte is below 0x20 when min(byte, 0x1f) is the byte.
TEXT ·attentionAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	XORQ AX, AX
	MOVQ $0x5c, DX
	MOVQ DX, X0
	VPBROADCASTB X0, Y0
	MOVQ $0x1f, DX
	MOVQ DX, X1
	VPBROADCASTB X1, Y1

loop64:
	LEAQ 64(AX), CX
	CMPQ CX, BX
	JA   loop32
	VMOVDQU (SI)(AX*1), Y2
	VMOVDQU 32(SI)(AX*1), Y5
	VPCMPEQB Y0, Y2, Y3
	VPMINUB  Y1, Y2, Y4
	VPCMPEQB Y2, Y4, Y4
	VPOR     Y3, Y4, Y3
	VPCMPEQB Y0, Y5, Y6
	VPMINUB  Y1, Y5, Y7
	VPCMPEQB Y5, Y7, Y7
	VPOR     Y6, Y7, Y6
	VPOR     Y3, Y6, Y8
	VPTEST   Y8, Y8
	JNZ      found64
	MOVQ     CX, AX
	JMP      loop64

found64:
	VPMOVMSKB Y3, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $32, AX
	VPMOVMSKB Y6, DX
	JMP       found

loop32:
	LEAQ 32(AX), CX
	CMPQ CX, BX
	JA   tail
	VMOVDQU (SI)(AX*1), Y2
	VPCMPEQB Y0, Y2, Y3
	VPMINUB  Y1, Y2, Y4
	VPCMPEQB Y2, Y4, Y4
	VPOR     Y3, Y4, Y3
	VPMOVMSKB Y3, DX
	TESTL    DX, DX
	JNZ      found
	MOVQ     CX, AX
	JMP      loop32

found:
	BSFL DX, DX
	ADDQ DX, AX
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

tail:
	VZEROUPPER

tailloop:
	CMPQ AX, BX
	JAE  done
	MOVBLZX (SI)(AX*1), DX
	CMPB DL, $0x5c
	JEQ  done
	CMPB DL, $0x20
	JB   done
	INCQ AX
	JMP  tailloop

done:
	MOVQ AX, ret+24(FP)
	RET

// func stopAVX2(b []byte) int
//
// attentionAVX2 that stops at a quote too: where a JSON string's plain run
// ends.
TEXT ·stopAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	XORQ AX, AX
	MOVQ $0x5c, DX
	MOVQ DX, X0
	VPBROADCASTB X0, Y0
	MOVQ $0x1f, DX
	MOVQ DX, X1
	VPBROADCASTB X1, Y1
	MOVQ $0x22, DX
	MOVQ DX, X9
	VPBROADCASTB X9, Y9

sloop64:
	LEAQ 64(AX), CX
	CMPQ CX, BX
	JA   sloop32
	VMOVDQU (SI)(AX*1), Y2
	VMOVDQU 32(SI)(AX*1), Y5
	VPCMPEQB Y0, Y2, Y3
	VPMINUB  Y1, Y2, Y4
	VPCMPEQB Y2, Y4, Y4
	VPOR     Y3, Y4, Y3
	VPCMPEQB Y9, Y2, Y10
	VPOR     Y10, Y3, Y3
	VPCMPEQB Y0, Y5, Y6
	VPMINUB  Y1, Y5, Y7
	VPCMPEQB Y5, Y7, Y7
	VPOR     Y6, Y7, Y6
	VPCMPEQB Y9, Y5, Y11
	VPOR     Y11, Y6, Y6
	VPOR     Y3, Y6, Y8
	VPTEST   Y8, Y8
	JNZ      sfound64
	MOVQ     CX, AX
	JMP      sloop64

sfound64:
	VPMOVMSKB Y3, DX
	TESTL     DX, DX
	JNZ       sfound
	ADDQ      $32, AX
	VPMOVMSKB Y6, DX
	JMP       sfound

sloop32:
	LEAQ 32(AX), CX
	CMPQ CX, BX
	JA   stail
	VMOVDQU (SI)(AX*1), Y2
	VPCMPEQB Y0, Y2, Y3
	VPMINUB  Y1, Y2, Y4
	VPCMPEQB Y2, Y4, Y4
	VPOR     Y3, Y4, Y3
	VPCMPEQB Y9, Y2, Y10
	VPOR     Y10, Y3, Y3
	VPMOVMSKB Y3, DX
	TESTL    DX, DX
	JNZ      sfound
	MOVQ     CX, AX
	JMP      sloop32

sfound:
	BSFL DX, DX
	ADDQ DX, AX
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

stail:
	VZEROUPPER

stailloop:
	CMPQ AX, BX
	JAE  sdone
	MOVBLZX (SI)(AX*1), DX
	CMPB DL, $0x5c
	JEQ  sdone
	CMPB DL, $0x22
	JEQ  sdone
	CMPB DL, $0x20
	JB   sdone
	INCQ AX
	JMP  stailloop

sdone:
	MOVQ AX, ret+24(FP)
	RET
