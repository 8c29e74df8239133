/*
 * bigint_harness.c - runs schedlab's BigInteger kernels (mulAdd, squareToLen) on test cases
 * read from stdin, with every int[] between two PROT_NONE guard pages.
 *
 * Linked with an object that defines one kernel (symbol KERNEL, set with -DKERNEL=name);
 * each input line says which of the two signatures to call it with:
 *
 *     i64 mul_add(i64 out, i32 out_length, i64 in, i32 in_length, i32 offset, i32 len, i32 k)
 *     i32 square_to_len(i64 x, i32 x_length, i32 len, i64 z, i32 z_length, i32 zlen)
 *
 * Protocol (md5_harness.c's): one case per line, single spaces, decimal integers; an int[]
 * is its elements as 8 lowercase hex digits each (the int's value, stored in native byte
 * order: big-endian on s390x), "-" when empty, "=" for "the same array as the written one".
 *
 *   input:  mul_add LAYOUT offset len k OUT IN          output: ret OUT
 *           square_to_len LAYOUT len zlen X Z           output: ret Z
 *
 * LAYOUT is "start" (the array begins right after a guard page) or "end" (it ends right
 * before one); the other side has a guard page too, one page or less away. An access the
 * kernel should have refused crashes the harness. ret: mul_add's 64-bit result, or
 * square_to_len's low 32 bits, sign-extended, in decimal. Malformed input: exit status 2.
 *
 * The 32-bit arguments are passed sign-extended (see md5_harness.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef KERNEL
#define KERNEL bigint_mul_add
#endif

/* Declared without a prototype of its own; each case casts it to the signature it uses. */
extern void KERNEL(void);

typedef int64_t (*mul_add_fn)(int32_t *out, int64_t out_length, int32_t *in, int64_t in_length,
                              int64_t offset, int64_t len, int64_t k);
typedef uint64_t (*square_fn)(int32_t *x, int64_t x_length, int64_t len, int32_t *z,
                              int64_t z_length, int64_t zlen);

static unsigned long lineno;

static void fail(const char *what) {
    fprintf(stderr, "bigint_harness: input line %lu: %s\n", lineno, what);
    exit(2);
}

/* An int[] of n elements between guard pages. */
struct guarded {
    char *map;
    size_t map_len;
    int32_t *data;
    size_t n;
};

static struct guarded guarded_alloc(size_t n, int at_end) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = n * 4;
    size_t data_pages = (bytes + page - 1) / page;
    if (data_pages == 0) data_pages = 1;
    struct guarded g;
    g.map_len = (data_pages + 2) * page;
    g.map = mmap(NULL, g.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.map == MAP_FAILED) fail("mmap failed");
    if (mprotect(g.map, page, PROT_NONE) != 0 ||
        mprotect(g.map + (data_pages + 1) * page, page, PROT_NONE) != 0)
        fail("mprotect failed");
    char *first = g.map + page;
    g.data = (int32_t *)(at_end ? first + data_pages * page - bytes : first);
    g.n = n;
    return g;
}

static void guarded_free(struct guarded *g) { munmap(g->map, g->map_len); }

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Parses the next space-separated token; returns its start and length via *len. */
static char *token(char **cursor, size_t *len) {
    char *s = *cursor;
    while (*s == ' ') s++;
    size_t n = strcspn(s, " \r\n");
    if (n == 0) fail("missing field");
    *cursor = s + n;
    *len = n;
    return s;
}

static long number(char **cursor) {
    size_t n;
    char *s = token(cursor, &n);
    char buf[32];
    if (n >= sizeof buf) fail("number too long");
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    long v = strtol(buf, &end, 10);
    if (*end) fail("invalid number");
    return v;
}

/* An int[] field: NULL with *same = 1 for "=", else a guarded array. */
static int array(char **cursor, int at_end, struct guarded *g) {
    size_t n;
    char *s = token(cursor, &n);
    if (n == 1 && s[0] == '=') return 1;
    size_t words = 0;
    if (!(n == 1 && s[0] == '-')) {
        if (n % 8 != 0) fail("an int[] needs 8 hex digits per element");
        words = n / 8;
    }
    *g = guarded_alloc(words, at_end);
    for (size_t i = 0; i < words; i++) {
        uint32_t w = 0;
        for (int d = 0; d < 8; d++) {
            int v = hex_value(s[8 * i + d]);
            if (v < 0) fail("invalid hex digit");
            w = w << 4 | (uint32_t)v;
        }
        g->data[i] = (int32_t)w;
    }
    return 0;
}

static void print_array(const struct guarded *g) {
    if (g->n == 0) fputs(" -", stdout);
    else putchar(' ');
    for (size_t i = 0; i < g->n; i++) printf("%08x", (uint32_t)g->data[i]);
    putchar('\n');
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) != -1) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        char *cur = line;
        size_t n;
        char *kind = token(&cur, &n);
        int is_mul_add = n == 7 && memcmp(kind, "mul_add", 7) == 0;
        int is_square = n == 13 && memcmp(kind, "square_to_len", 13) == 0;
        if (!is_mul_add && !is_square) fail("expected `mul_add` or `square_to_len`");
        char *layout = token(&cur, &n);
        int at_end;
        if (n == 3 && memcmp(layout, "end", 3) == 0) at_end = 1;
        else if (n == 5 && memcmp(layout, "start", 5) == 0) at_end = 0;
        else fail("layout must be `start` or `end`");
        struct guarded written, other;
        if (is_mul_add) {
            long offset = number(&cur), len = number(&cur), k = number(&cur);
            if (array(&cur, at_end, &written)) fail("OUT cannot be `=`");
            int same = array(&cur, at_end, &other);
            struct guarded *in = same ? &written : &other;
            int64_t ret = ((mul_add_fn)KERNEL)(written.data, (int32_t)written.n, in->data,
                                                       (int32_t)in->n, (int32_t)offset,
                                                       (int32_t)len, (int32_t)k);
            printf("%lld", (long long)ret);
            print_array(&written);
            if (!same) guarded_free(&other);
        } else {
            long len = number(&cur), zlen = number(&cur);
            /* X comes first on the line; Z is the written array. */
            char *x_start = cur;
            size_t xn;
            token(&cur, &xn);
            if (array(&cur, at_end, &written)) fail("Z cannot be `=`");
            char *x_cur = x_start;
            int same = array(&x_cur, at_end, &other);
            struct guarded *x = same ? &written : &other;
            uint64_t r = ((square_fn)KERNEL)(x->data, (int32_t)x->n, (int32_t)len,
                                                     written.data, (int32_t)written.n,
                                                     (int32_t)zlen);
            printf("%ld", (long)(int32_t)(uint32_t)r);
            print_array(&written);
            if (!same) guarded_free(&other);
        }
        guarded_free(&written);
    }
    free(line);
    return fflush(stdout) == 0 ? 0 : 1;
}
