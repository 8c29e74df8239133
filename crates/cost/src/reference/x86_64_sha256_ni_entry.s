# Entry of the callable form of x86_64_sha256_ni.s (tests and the bench):
# void schedlab_reference_sha256_ni(uint32_t state[8], const uint8_t *msg, const uint8_t *end,
#                                   const uint32_t k[64]), end - msg a non-zero multiple of 64,
# k 16-byte aligned (the loop adds it with SSE's `paddd xmm, m128`).
# Moves the arguments where the loop wants them and the state from A..H order into ABEF/CDGH;
# every xmm register is caller-saved (System V).
.intel_syntax noprefix
.text
.globl schedlab_reference_sha256_ni
.type schedlab_reference_sha256_ni, @function
schedlab_reference_sha256_ni:
  mov r8, rdi
  mov rdi, rsi
  mov rsi, rdx
  movdqu xmm1, xmmword ptr [r8]
  movdqu xmm2, xmmword ptr [r8 + 16]
  pshufd xmm1, xmm1, 0xB1
  pshufd xmm2, xmm2, 0x1B
  movdqa xmm10, xmm1
  palignr xmm1, xmm2, 8
  pblendw xmm2, xmm10, 0xF0
  movdqu xmm7, xmmword ptr [rip + .Lschedlab_bswap_mask]
