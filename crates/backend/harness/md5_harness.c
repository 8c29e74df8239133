/*
 * md5_harness.c - runs schedlab's MD5 kernel on test cases read from stdin.
 *
 * Linked with an object that defines the kernel (symbol KERNEL, default
 * md5_compress_multi_block; override with -DKERNEL=name):
 *
 *     i32 KERNEL(i64 state, i64 buf, i32 len, i32 ofs, i32 limit)
 *
 * Protocol (shared by every schedlab harness): one case per input line, fields
 * separated by single spaces, integers in decimal, byte strings in lowercase hex
 * ("-" for an empty one); one result line per case on stdout, in order. Malformed
 * input: a message on stderr and exit status 2.
 *
 *   input:  a b c d len ofs limit bytes      (a..d: u32 state words; len, ofs, limit: i32;
 *                                             bytes: the buffer, at least len bytes)
 *   output: ret a b c d                      (ret: i32 returned; a..d: state afterwards)
 *
 * The buffer is allocated with exactly its size, so a read past it can be caught by
 * tools; the state words are in native byte order (big-endian on s390x).
 *
 * The 32-bit arguments are passed sign-extended and the result is taken from the low
 * 32 bits of the return register, so the harness does not depend on whether the
 * kernel extends its i32 result (s390x and riscv64 ABIs ask for extension; Cranelift
 * only does it for parameters marked sext/uext).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KERNEL
#define KERNEL md5_compress_multi_block
#endif

extern uint64_t KERNEL(uint32_t *state, const uint8_t *buf, int64_t len, int64_t ofs,
                       int64_t limit);

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void fail(unsigned long line, const char *what) {
    fprintf(stderr, "md5_harness: input line %lu: %s\n", line, what);
    exit(2);
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    unsigned long lineno = 0;
    while (getline(&line, &cap, stdin) != -1) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        unsigned long a, b, c, d;
        long len, ofs, limit;
        int used = 0;
        if (sscanf(line, "%lu %lu %lu %lu %ld %ld %ld %n", &a, &b, &c, &d, &len, &ofs, &limit,
                   &used) != 7)
            fail(lineno, "expected `a b c d len ofs limit bytes`");
        char *hex = line + used;
        size_t hex_len = strcspn(hex, " \r\n");
        size_t size = 0;
        if (!(hex_len == 1 && hex[0] == '-')) {
            if (hex_len % 2 != 0) fail(lineno, "odd number of hex digits");
            size = hex_len / 2;
        }
        if (len < 0 || (size_t)len > size) fail(lineno, "len is negative or exceeds the bytes");
        uint8_t *buf = malloc(size ? size : 1);
        if (!buf) fail(lineno, "out of memory");
        for (size_t i = 0; i < size; i++) {
            int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
            if (hi < 0 || lo < 0) fail(lineno, "invalid hex digit");
            buf[i] = (uint8_t)(hi << 4 | lo);
        }
        uint32_t state[4] = {(uint32_t)a, (uint32_t)b, (uint32_t)c, (uint32_t)d};
        int32_t ret = (int32_t)(uint32_t)KERNEL(state, buf, len, ofs, limit);
        printf("%ld %lu %lu %lu %lu\n", (long)ret, (unsigned long)state[0],
               (unsigned long)state[1], (unsigned long)state[2], (unsigned long)state[3]);
        free(buf);
    }
    free(line);
    return fflush(stdout) == 0 ? 0 : 1;
}
