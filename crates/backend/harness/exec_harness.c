/* schedlab's generic call harness (crates/backend/src/exec/harness.rs).
 *
 * The Rust side appends a table of trampolines to this file:
 *     static void (*const TRAMPOLINES[])(unsigned char *) = { ... };
 * and a main() that passes it to run_calls, and links it with the object that defines them.
 *
 * Protocol, one call per stdin line, fields separated by single spaces:
 *     <trampoline> <e|s> <buffer hex> <n> <len>:<hex> ... <m> <slot>:<array> ...
 *         <k> <container>.<offset>:<array> ...
 * the trampoline's number; the arrays' placement (e: each array ends right before a guard
 * page, s: each begins right after one); the trampoline's buffer (16-byte little-endian
 * slots); n arrays, each its length in bytes and its bytes in the target's order; m pointer
 * slots of the buffer, each receiving (little-endian) the address of one of the n arrays;
 * k pointer slots inside arrays, each receiving (in the target's byte order) at byte offset
 * of array container the address of an array.
 * One stdout line per call:
 *     ok <buffer after the call as hex> <len>:<hex> ...   (every array after the call)
 *     trap <SIGILL|SIGSEGV|SIGBUS|SIGFPE|SIGTRAP|timeout>
 *     bad <reason>                                        (a malformed line; nothing ran)
 * Every array gets its own mapping per call: a PROT_NONE page, the data pages, a PROT_NONE
 * page (crates/backend/src/exec/guarded.rs computes the same layout); an empty array points at
 * the upper guard page. A trap is caught with sigsetjmp/siglongjmp on an alternate signal
 * stack (so a stack overflow is caught too); an alarm stops a call that runs longer than
 * TIMEOUT_SECONDS.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef TIMEOUT_SECONDS
#define TIMEOUT_SECONDS 10
#endif

#define SLOT_BYTES 16
#define MAX_ARRAYS 64

static sigjmp_buf jump_back;
static volatile sig_atomic_t caught;

static void on_signal(int sig) {
    caught = sig;
    siglongjmp(jump_back, 1);
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGILL: return "SIGILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGALRM: return "timeout";
    default: return "signal";
    }
}

/* Digit values of hex characters, -1 for every other byte (filled by fill_hex_table). */
static signed char hex_table[256];

static void fill_hex_table(void) {
    for (int c = 0; c < 256; c++) {
        hex_table[c] = -1;
        if (c >= '0' && c <= '9') hex_table[c] = (signed char)(c - '0');
        if (c >= 'a' && c <= 'f') hex_table[c] = (signed char)(c - 'a' + 10);
        if (c >= 'A' && c <= 'F') hex_table[c] = (signed char)(c - 'A' + 10);
    }
}

static int hex_value(int c) {
    return hex_table[(unsigned char)c];
}

static void install_handlers(void) {
    static char alt_stack[1 << 16];
    stack_t ss;
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    ss.ss_flags = 0;
    sigaltstack(&ss, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP, SIGALRM};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, 0);
}

/* One array of the current call, in its own guarded mapping. Static, so that it survives a
 * siglongjmp. */
struct guarded {
    unsigned char *map;
    size_t map_len;
    unsigned char *data;
    size_t len;
};

static struct guarded arrays[MAX_ARRAYS];
static size_t array_count;

static void unmap_arrays(void) {
    for (size_t i = 0; i < array_count; i++) munmap(arrays[i].map, arrays[i].map_len);
    array_count = 0;
}

/* Maps len bytes between guard pages; 0 on failure. */
static int map_guarded(struct guarded *g, size_t len, int at_end) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (len + page - 1) / page;
    if (data_pages > ((size_t)-1) / page - 2) return 0;
    size_t map_len = (data_pages + 2) * page;
    void *map = mmap(0, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return 0;
    unsigned char *base = map;
    if (data_pages > 0 &&
        mprotect(base + page, data_pages * page, PROT_READ | PROT_WRITE) != 0) {
        munmap(map, map_len);
        return 0;
    }
    g->map = base;
    g->map_len = map_len;
    g->data = base + page + (at_end ? data_pages * page - len : 0);
    g->len = len;
    return 1;
}

/* A decimal number; advances *p. */
static int read_number(char **p, size_t *out) {
    char *s = *p;
    size_t v = 0;
    if (*s < '0' || *s > '9') return 0;
    while (*s >= '0' && *s <= '9') {
        if (v > ((size_t)-1 - 9) / 10) return 0;
        v = v * 10 + (size_t)(*s - '0');
        s++;
    }
    *p = s;
    *out = v;
    return 1;
}

static int expect_char(char **p, char c) {
    if (**p != c) return 0;
    (*p)++;
    return 1;
}

/* Exactly n bytes of hex into out, which must be followed by a space or the line's end. */
static int read_hex(char **p, unsigned char *out, size_t n) {
    char *s = *p;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_value(s[0]);
        int lo = hi < 0 ? -1 : hex_value(s[1]);
        if (lo < 0) return 0;
        out[i] = (unsigned char)(hi * 16 + lo);
        s += 2;
    }
    if (*s != ' ' && *s != '\n' && *s != '\0') return 0;
    *p = s;
    return 1;
}

/* The length of a hex run. */
static size_t hex_run(const char *s) {
    size_t n = 0;
    while (hex_value(s[n]) >= 0) n++;
    return n;
}

static void write_hex(const unsigned char *bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    char chunk[4096];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        chunk[used++] = digits[bytes[i] >> 4];
        chunk[used++] = digits[bytes[i] & 15];
        if (used == sizeof chunk) {
            fwrite(chunk, 1, used, stdout);
            used = 0;
        }
    }
    fwrite(chunk, 1, used, stdout);
}

static unsigned char buffer[1 << 16] __attribute__((aligned(16)));
static size_t buffer_len;

/* Parses one line and maps its arrays; the reason when it is malformed, else 0. */
static const char *parse_call(char *p, long count, size_t *trampoline) {
    size_t t, n, m;
    if (!read_number(&p, &t) || !expect_char(&p, ' ')) return "no trampoline number";
    if (t >= (size_t)count) return "no such trampoline";
    *trampoline = t;
    int at_end;
    if (*p == 'e') at_end = 1;
    else if (*p == 's') at_end = 0;
    else return "placement is neither e nor s";
    p++;
    if (!expect_char(&p, ' ')) return "no buffer";
    size_t digits = hex_run(p);
    if (digits % 2 != 0 || digits / 2 > sizeof buffer) return "buffer too long or odd";
    buffer_len = digits / 2;
    if (!read_hex(&p, buffer, buffer_len) || !expect_char(&p, ' ')) return "bad buffer";
    if (!read_number(&p, &n) || n > MAX_ARRAYS) return "bad array count";
    for (size_t i = 0; i < n; i++) {
        size_t len;
        if (!expect_char(&p, ' ') || !read_number(&p, &len) || !expect_char(&p, ':'))
            return "bad array length";
        if (len > ((size_t)-1) / 2 || hex_run(p) != 2 * len)
            return "array length does not match its bytes";
        if (!map_guarded(&arrays[array_count], len, at_end)) return "cannot map an array";
        array_count++;
        if (!read_hex(&p, arrays[array_count - 1].data, len)) return "bad array bytes";
    }
    if (!expect_char(&p, ' ') || !read_number(&p, &m)) return "bad pointer count";
    for (size_t i = 0; i < m; i++) {
        size_t slot, array;
        if (!expect_char(&p, ' ') || !read_number(&p, &slot) || !expect_char(&p, ':') ||
            !read_number(&p, &array))
            return "bad pointer slot";
        if (array >= array_count) return "pointer to no array";
        if (slot >= buffer_len / SLOT_BYTES) return "pointer slot outside the buffer";
        uint64_t address = (uint64_t)(uintptr_t)arrays[array].data;
        for (int b = 0; b < 8; b++) buffer[slot * SLOT_BYTES + b] = (unsigned char)(address >> (8 * b));
    }
    if (!expect_char(&p, ' ') || !read_number(&p, &m)) return "bad inner pointer count";
    for (size_t i = 0; i < m; i++) {
        size_t container, offset, array;
        if (!expect_char(&p, ' ') || !read_number(&p, &container) || !expect_char(&p, '.') ||
            !read_number(&p, &offset) || !expect_char(&p, ':') || !read_number(&p, &array))
            return "bad inner pointer slot";
        if (container >= array_count || array >= array_count) return "inner pointer to no array";
        if (offset > arrays[container].len || arrays[container].len - offset < 8)
            return "inner pointer slot outside its array";
        uint64_t address = (uint64_t)(uintptr_t)arrays[array].data;
        memcpy(arrays[container].data + offset, &address, sizeof address);
    }
    if (*p != '\n' && *p != '\0') return "trailing characters";
    return 0;
}

int run_calls(void (*const *trampolines)(unsigned char *), long count) {
    char *line = 0;
    size_t cap = 0;
    install_handlers();
    fill_hex_table();
    while (getline(&line, &cap, stdin) > 0) {
        size_t t = 0;
        const char *bad = parse_call(line, count, &t);
        if (bad) {
            printf("bad %s\n", bad);
        } else if (sigsetjmp(jump_back, 1) == 0) {
            alarm(TIMEOUT_SECONDS);
            trampolines[t](buffer);
            alarm(0);
            printf("ok ");
            write_hex(buffer, buffer_len);
            for (size_t i = 0; i < array_count; i++) {
                printf(" %zu:", arrays[i].len);
                write_hex(arrays[i].data, arrays[i].len);
            }
            printf("\n");
        } else {
            alarm(0);
            printf("trap %s\n", signal_name(caught));
        }
        unmap_arrays();
        fflush(stdout);
    }
    free(line);
    return 0;
}
