// Counts the lock acquisitions of a process built from this package (scripts/bench-transports.sh --locks).
//
// Every lock in ServerAPIKit and its backends is taken through Mutex.withLockAnnotated, which calls
// ThreadSanitizer's __tsan_acquire and __tsan_release when a library defines them (Locked.swift). Preloaded, this
// library defines them: it counts each acquisition by the code that took it (its return address), and the ones
// taken while the same thread already held a lock (nested). At exit it writes, to $SAPI_LOCK_REPORT, the totals
// and one line per site: count, then the site as file and offset, for addr2line.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SITES 1024

static _Atomic long acquisitions, nested;
static _Atomic(uintptr_t) site_address[SITES];
static _Atomic long site_count[SITES];
static __thread int depth;

static void count_site(uintptr_t address) {
    for (unsigned i = 0; i < SITES; i++) {
        unsigned slot = (unsigned)((address >> 2) + i) % SITES;
        uintptr_t seen = atomic_load(&site_address[slot]);
        if (seen == 0) {
            uintptr_t empty = 0;
            if (!atomic_compare_exchange_strong(&site_address[slot], &empty, address) && empty != address) continue;
            seen = address;
        }
        if (seen == address) {
            atomic_fetch_add(&site_count[slot], 1);
            return;
        }
    }
}

void __tsan_acquire(void *token) {
    (void)token;
    atomic_fetch_add(&acquisitions, 1);
    if (depth > 0) atomic_fetch_add(&nested, 1);
    depth++;
    count_site((uintptr_t)__builtin_return_address(0));
}

void __tsan_release(void *token) {
    (void)token;
    depth--;
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("SAPI_LOCK_REPORT");
    FILE *out = path ? fopen(path, "w") : stderr;
    if (!out) return;
    fprintf(out, "total %ld %ld\n", atomic_load(&acquisitions), atomic_load(&nested));
    for (unsigned i = 0; i < SITES; i++) {
        uintptr_t address = atomic_load(&site_address[i]);
        if (address == 0) continue;
        Dl_info info;
        if (dladdr((void *)address, &info) && info.dli_fname) {
            fprintf(out, "site %ld %s 0x%lx\n", atomic_load(&site_count[i]), info.dli_fname,
                    (unsigned long)(address - (uintptr_t)info.dli_fbase));
        } else {
            fprintf(out, "site %ld ? 0x%lx\n", atomic_load(&site_count[i]), (unsigned long)address);
        }
    }
    if (path) fclose(out);
}
