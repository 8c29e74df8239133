// Exit of the callable form of aarch64_sha256_ce.s: stores the state back.
  st1 {v0.4s, v1.4s}, [x9]
  ldp d8, d9, [sp], #16
  ret
