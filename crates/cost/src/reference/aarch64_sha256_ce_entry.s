// Entry of the callable form of aarch64_sha256_ce.s (tests only):
// void schedlab_reference_sha256_ce(uint32_t state[8], const uint8_t *msg, uint64_t blocks,
//                                   const uint32_t k[64]), blocks >= 1.
// Sets up the registers the loop's header names; d8/d9 are callee-saved (AAPCS64).
.text
.globl schedlab_reference_sha256_ce
.type schedlab_reference_sha256_ce, %function
schedlab_reference_sha256_ce:
  stp d8, d9, [sp, #-16]!
  ld1 {v16.4s, v17.4s, v18.4s, v19.4s}, [x3], #64
  ld1 {v20.4s, v21.4s, v22.4s, v23.4s}, [x3], #64
  ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x3], #64
  ld1 {v28.4s, v29.4s, v30.4s, v31.4s}, [x3]
  ld1 {v0.4s, v1.4s}, [x0]
  mov x9, x0
  mov x0, x1
