/* schedlab's generic call harness (crates/backend/src/exec/harness.rs).
 *
 * The Rust side appends a table of trampolines to this file:
 *     static void (*const TRAMPOLINES[])(unsigned char *) = { ... };
 *     #define TRAMPOLINE_COUNT n
 * and links it with the object that defines them. Protocol, one call per stdin line:
 *     <trampoline number> <buffer as hex>
 * and one stdout line per call:
 *     ok <buffer after the call as hex>
 *     trap <SIGILL|SIGSEGV|SIGBUS|SIGFPE|SIGTRAP|timeout>
 *     bad <reason>
 * A trap is caught with sigsetjmp/siglongjmp on an alternate signal stack (so a stack
 * overflow is caught too); an alarm stops a call that runs longer than TIMEOUT_SECONDS.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TIMEOUT_SECONDS
#define TIMEOUT_SECONDS 10
#endif

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

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
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

int run_calls(void (*const *trampolines)(unsigned char *), long count) {
    static unsigned char buffer[1 << 16] __attribute__((aligned(16)));
    char *line = 0;
    size_t cap = 0;
    install_handlers();
    while (getline(&line, &cap, stdin) > 0) {
        char *p = line;
        long t = strtol(p, &p, 10);
        while (*p == ' ') p++;
        size_t n = 0;
        while (hex_value(p[0]) >= 0 && hex_value(p[1]) >= 0 && n < sizeof buffer) {
            buffer[n++] = (unsigned char)(hex_value(p[0]) * 16 + hex_value(p[1]));
            p += 2;
        }
        if (t < 0 || t >= count) {
            printf("bad trampoline %ld\n", t);
            fflush(stdout);
            continue;
        }
        if (sigsetjmp(jump_back, 1) == 0) {
            alarm(TIMEOUT_SECONDS);
            trampolines[t](buffer);
            alarm(0);
            printf("ok ");
            for (size_t i = 0; i < n; i++) printf("%02x", buffer[i]);
            printf("\n");
        } else {
            alarm(0);
            printf("trap %s\n", signal_name(caught));
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
