/*
 * md5mb_harness.c - runs schedlab's multi-buffer MD5 kernel (md5-mb) on test cases read
 * from stdin, every lane's buffer ending at a guard page.
 *
 * Linked with an object that defines the kernel (symbol KERNEL, e.g. md5_mb_x8):
 *
 *     i32 KERNEL(i64 state, i64 lanes, i32 blocks)
 *
 * where `lanes` points to one 16-byte descriptor per lane: { u64 buf; i32 len; i32 ofs; }.
 *
 * Protocol (shared by every schedlab harness, see md5_harness.c): one case per line,
 *
 *   input:  nlanes blocks w0 .. w(4*nlanes-1) { len ofs bytes } * nlanes
 *           (w: u32 state words in the kernel's layout; len, ofs, blocks: i32; bytes: the
 *            lane's buffer in hex, "-" when empty, at least len bytes)
 *   output: ret w0 .. w(4*nlanes-1)
 *
 * Each lane's buffer is copied to the end of its own mapping whose next page is
 * PROT_NONE, so a read past any lane's buffer faults instead of passing silently.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef KERNEL
#define KERNEL md5_mb_x8
#endif

struct lane {
    const uint8_t *buf;
    int32_t len;
    int32_t ofs;
};

extern uint64_t KERNEL(uint32_t *state, const struct lane *lanes, int64_t blocks);

#define MAX_LANES 8

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void fail(unsigned long line, const char *what) {
    fprintf(stderr, "md5mb_harness: input line %lu: %s\n", line, what);
    exit(2);
}

/* A mapping of `size` bytes rounded up to pages plus one PROT_NONE page after it; returns
 * the address `size` bytes before the guard page. */
static uint8_t *guarded(size_t size, void **map, size_t *map_len) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (size + page - 1) / page;
    *map_len = (data_pages + 1) * page;
    uint8_t *base = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base + data_pages * page, page, PROT_NONE) != 0) return NULL;
    *map = base;
    return base + data_pages * page - size;
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    unsigned long lineno = 0;
    while (getline(&line, &cap, stdin) != -1) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        char *p = line;
        int used = 0;
        long nlanes, blocks;
        if (sscanf(p, "%ld %ld %n", &nlanes, &blocks, &used) != 2)
            fail(lineno, "expected `nlanes blocks ...`");
        if (nlanes < 1 || nlanes > MAX_LANES) fail(lineno, "nlanes out of range");
        p += used;
        uint32_t state[4 * MAX_LANES];
        for (long i = 0; i < 4 * nlanes; i++) {
            unsigned long w;
            if (sscanf(p, "%lu %n", &w, &used) != 1) fail(lineno, "expected a state word");
            state[i] = (uint32_t)w;
            p += used;
        }
        struct lane lanes[MAX_LANES];
        void *maps[MAX_LANES];
        size_t map_lens[MAX_LANES];
        for (long l = 0; l < nlanes; l++) {
            long len, ofs;
            if (sscanf(p, "%ld %ld %n", &len, &ofs, &used) != 2)
                fail(lineno, "expected `len ofs bytes` for a lane");
            p += used;
            size_t hex_len = strcspn(p, " \r\n");
            size_t size = 0;
            if (!(hex_len == 1 && p[0] == '-')) {
                if (hex_len % 2 != 0) fail(lineno, "odd number of hex digits");
                size = hex_len / 2;
            }
            if (len < 0 || (size_t)len > size) fail(lineno, "len is negative or exceeds the bytes");
            uint8_t *buf = guarded(size, &maps[l], &map_lens[l]);
            if (!buf) fail(lineno, "cannot map a guarded buffer");
            for (size_t i = 0; i < size; i++) {
                int hi = hex_value(p[2 * i]), lo = hex_value(p[2 * i + 1]);
                if (hi < 0 || lo < 0) fail(lineno, "invalid hex digit");
                buf[i] = (uint8_t)(hi << 4 | lo);
            }
            p += hex_len;
            while (*p == ' ') p++;
            lanes[l].buf = buf;
            lanes[l].len = (int32_t)len;
            lanes[l].ofs = (int32_t)ofs;
        }
        int32_t ret = (int32_t)(uint32_t)KERNEL(state, lanes, blocks);
        printf("%ld", (long)ret);
        for (long i = 0; i < 4 * nlanes; i++) printf(" %lu", (unsigned long)state[i]);
        printf("\n");
        for (long l = 0; l < nlanes; l++) munmap(maps[l], map_lens[l]);
    }
    free(line);
    return fflush(stdout) == 0 ? 0 : 1;
}
