// SHA-256 compression of one 64-byte block with the Armv8 cryptographic extension
// (FEAT_SHA256: SHA256H, SHA256H2, SHA256SU0, SHA256SU1), the instruction shape of a
// hand-written intrinsic such as HotSpot's AArch64 `sha256_implCompress` stub. Written for
// schedlab from the instructions' definitions in the Arm Architecture Reference Manual, to be
// costed by llvm-mca; it is not run.
//
// Registers: v0 = ABCD, v1 = EFGH (the chaining state), x0 = message pointer, x2 = blocks left,
// v16..v31 = the 64 round constants, four per register, loaded once before the loop.
// v4..v7 hold the message schedule W[4q..4q+3] for quads q..q+3 (rotating); v8 = W + K of the
// current quad; v9 = ABCD before the quad (SHA256H2 needs it after SHA256H has replaced it);
// v2, v3 = the state at the start of the block (feed-forward).
//
// Per quad q of four rounds: v8 = W[q] + K[q]; SHA256H updates ABCD, SHA256H2 updates EFGH.
// For q < 12 the schedule word vector W[q+4] replaces W[q]:
// SHA256SU0 (W[q], W[q+1]) then SHA256SU1 (…, W[q+2], W[q+3]).
.Lloop:
  ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x0], #64
  rev32 v4.16b, v4.16b
  rev32 v5.16b, v5.16b
  rev32 v6.16b, v6.16b
  rev32 v7.16b, v7.16b
  mov v2.16b, v0.16b
  mov v3.16b, v1.16b
  add v8.4s, v4.4s, v16.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v4.4s, v5.4s
  sha256su1 v4.4s, v6.4s, v7.4s
  add v8.4s, v5.4s, v17.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v5.4s, v6.4s
  sha256su1 v5.4s, v7.4s, v4.4s
  add v8.4s, v6.4s, v18.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v6.4s, v7.4s
  sha256su1 v6.4s, v4.4s, v5.4s
  add v8.4s, v7.4s, v19.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v7.4s, v4.4s
  sha256su1 v7.4s, v5.4s, v6.4s
  add v8.4s, v4.4s, v20.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v4.4s, v5.4s
  sha256su1 v4.4s, v6.4s, v7.4s
  add v8.4s, v5.4s, v21.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v5.4s, v6.4s
  sha256su1 v5.4s, v7.4s, v4.4s
  add v8.4s, v6.4s, v22.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v6.4s, v7.4s
  sha256su1 v6.4s, v4.4s, v5.4s
  add v8.4s, v7.4s, v23.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v7.4s, v4.4s
  sha256su1 v7.4s, v5.4s, v6.4s
  add v8.4s, v4.4s, v24.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v4.4s, v5.4s
  sha256su1 v4.4s, v6.4s, v7.4s
  add v8.4s, v5.4s, v25.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v5.4s, v6.4s
  sha256su1 v5.4s, v7.4s, v4.4s
  add v8.4s, v6.4s, v26.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v6.4s, v7.4s
  sha256su1 v6.4s, v4.4s, v5.4s
  add v8.4s, v7.4s, v27.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  sha256su0 v7.4s, v4.4s
  sha256su1 v7.4s, v5.4s, v6.4s
  add v8.4s, v4.4s, v28.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  add v8.4s, v5.4s, v29.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  add v8.4s, v6.4s, v30.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  add v8.4s, v7.4s, v31.4s
  mov v9.16b, v0.16b
  sha256h q0, q1, v8.4s
  sha256h2 q1, q9, v8.4s
  add v0.4s, v0.4s, v2.4s
  add v1.4s, v1.4s, v3.4s
  subs x2, x2, #1
  b.ne .Lloop
