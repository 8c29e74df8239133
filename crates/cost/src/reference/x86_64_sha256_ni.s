# SHA-256 compression of one 64-byte block with the x86 SHA extensions (SHA256RNDS2,
# SHA256MSG1, SHA256MSG2; Intel SDM vol. 2), the instruction shape of a hand-written
# intrinsic such as OpenSSL's and HotSpot's SHA-NI code paths. Written for schedlab from the
# instructions' definitions, to be costed by llvm-mca; it is not run.
#
# Registers: xmm1 = ABEF, xmm2 = CDGH (the state in the order SHA256RNDS2 wants), rdi = message
# pointer, rsi = its end, rcx = the 64 round constants, xmm7 = the byte-swap mask for PSHUFB.
# xmm3..xmm6 hold the message schedule W[4q..4q+3] for quads q..q+3 (rotating); xmm0 = W + K
# (SHA256RNDS2's implicit operand; PSHUFD moves its upper half down for the second two
# rounds); xmm8, xmm9 = the state at the start of the block (feed-forward); xmm10 = scratch.
# For q < 12 the schedule word vector W[q+4] replaces W[q]: SHA256MSG1 (W[q], W[q+1]), plus
# W[q+2..q+3] shifted by one word (PALIGNR), then SHA256MSG2 (…, W[q+3]).
.intel_syntax noprefix
.Lloop:
  movdqu xmm3, xmmword ptr [rdi + 0]
  movdqu xmm4, xmmword ptr [rdi + 16]
  movdqu xmm5, xmmword ptr [rdi + 32]
  movdqu xmm6, xmmword ptr [rdi + 48]
  pshufb xmm3, xmm7
  pshufb xmm4, xmm7
  pshufb xmm5, xmm7
  pshufb xmm6, xmm7
  movdqa xmm8, xmm1
  movdqa xmm9, xmm2
  movdqa xmm0, xmm3
  paddd xmm0, xmmword ptr [rcx + 0]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm3, xmm4
  movdqa xmm10, xmm6
  palignr xmm10, xmm5, 4
  paddd xmm3, xmm10
  sha256msg2 xmm3, xmm6
  movdqa xmm0, xmm4
  paddd xmm0, xmmword ptr [rcx + 16]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm4, xmm5
  movdqa xmm10, xmm3
  palignr xmm10, xmm6, 4
  paddd xmm4, xmm10
  sha256msg2 xmm4, xmm3
  movdqa xmm0, xmm5
  paddd xmm0, xmmword ptr [rcx + 32]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm5, xmm6
  movdqa xmm10, xmm4
  palignr xmm10, xmm3, 4
  paddd xmm5, xmm10
  sha256msg2 xmm5, xmm4
  movdqa xmm0, xmm6
  paddd xmm0, xmmword ptr [rcx + 48]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm6, xmm3
  movdqa xmm10, xmm5
  palignr xmm10, xmm4, 4
  paddd xmm6, xmm10
  sha256msg2 xmm6, xmm5
  movdqa xmm0, xmm3
  paddd xmm0, xmmword ptr [rcx + 64]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm3, xmm4
  movdqa xmm10, xmm6
  palignr xmm10, xmm5, 4
  paddd xmm3, xmm10
  sha256msg2 xmm3, xmm6
  movdqa xmm0, xmm4
  paddd xmm0, xmmword ptr [rcx + 80]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm4, xmm5
  movdqa xmm10, xmm3
  palignr xmm10, xmm6, 4
  paddd xmm4, xmm10
  sha256msg2 xmm4, xmm3
  movdqa xmm0, xmm5
  paddd xmm0, xmmword ptr [rcx + 96]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm5, xmm6
  movdqa xmm10, xmm4
  palignr xmm10, xmm3, 4
  paddd xmm5, xmm10
  sha256msg2 xmm5, xmm4
  movdqa xmm0, xmm6
  paddd xmm0, xmmword ptr [rcx + 112]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm6, xmm3
  movdqa xmm10, xmm5
  palignr xmm10, xmm4, 4
  paddd xmm6, xmm10
  sha256msg2 xmm6, xmm5
  movdqa xmm0, xmm3
  paddd xmm0, xmmword ptr [rcx + 128]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm3, xmm4
  movdqa xmm10, xmm6
  palignr xmm10, xmm5, 4
  paddd xmm3, xmm10
  sha256msg2 xmm3, xmm6
  movdqa xmm0, xmm4
  paddd xmm0, xmmword ptr [rcx + 144]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm4, xmm5
  movdqa xmm10, xmm3
  palignr xmm10, xmm6, 4
  paddd xmm4, xmm10
  sha256msg2 xmm4, xmm3
  movdqa xmm0, xmm5
  paddd xmm0, xmmword ptr [rcx + 160]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm5, xmm6
  movdqa xmm10, xmm4
  palignr xmm10, xmm3, 4
  paddd xmm5, xmm10
  sha256msg2 xmm5, xmm4
  movdqa xmm0, xmm6
  paddd xmm0, xmmword ptr [rcx + 176]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  sha256msg1 xmm6, xmm3
  movdqa xmm10, xmm5
  palignr xmm10, xmm4, 4
  paddd xmm6, xmm10
  sha256msg2 xmm6, xmm5
  movdqa xmm0, xmm3
  paddd xmm0, xmmword ptr [rcx + 192]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  movdqa xmm0, xmm4
  paddd xmm0, xmmword ptr [rcx + 208]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  movdqa xmm0, xmm5
  paddd xmm0, xmmword ptr [rcx + 224]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  movdqa xmm0, xmm6
  paddd xmm0, xmmword ptr [rcx + 240]
  sha256rnds2 xmm2, xmm1, xmm0
  pshufd xmm0, xmm0, 14
  sha256rnds2 xmm1, xmm2, xmm0
  paddd xmm1, xmm8
  paddd xmm2, xmm9
  add rdi, 64
  cmp rdi, rsi
  jne .Lloop
