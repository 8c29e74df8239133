# Exit of the callable form of x86_64_sha256_ni.s: the state back into A..H order.
  pshufd xmm1, xmm1, 0x1B
  pshufd xmm2, xmm2, 0xB1
  movdqa xmm10, xmm1
  pblendw xmm1, xmm2, 0xF0
  palignr xmm2, xmm10, 8
  movdqu xmmword ptr [r8], xmm1
  movdqu xmmword ptr [r8 + 16], xmm2
  ret
.section .rodata
.p2align 4
.Lschedlab_bswap_mask:
  .byte 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12
.text
