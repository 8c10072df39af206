// An experiment for scripts/soak.sh --emulate-url-fix, never linked into anything shipped.
//
// FoundationNetworking up to Swift 6.3.1 parses each URLSession task's URL with libcurl to compare hosts
// (CFURLSessionCurlHostIsEqual) and frees the parsed handle with curl_free() instead of curl_url_cleanup(),
// leaking its parts (scheme, host, path…) on every task; swift-corelibs-foundation fixed it on main
// (#5498). Preloaded, this library turns that curl_free() into curl_url_cleanup(), so a soak run shows
// what URLSessionTransport's memory does once the fix ships.
//
//   cc -shared -fPIC -O2 -o curlu_cleanup_preload.so curlu_cleanup_preload.c -ldl -lcurl
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>

// The handle the calling thread got last from curl_url(): the one CFURLSessionCurlHostIsEqual frees.
static __thread CURLU *last_handle;

CURLU *curl_url(void) {
    static CURLU *(*real)(void);
    if (!real) real = (CURLU * (*)(void)) dlsym(RTLD_NEXT, "curl_url");
    CURLU *handle = real();
    last_handle = handle;
    return handle;
}

void curl_url_cleanup(CURLU *handle) {
    static void (*real)(CURLU *);
    if (!real) real = (void (*)(CURLU *))dlsym(RTLD_NEXT, "curl_url_cleanup");
    if (handle == last_handle) last_handle = NULL;
    real(handle);
}

void curl_free(void *pointer) {
    static void (*real)(void *);
    if (!real) real = (void (*)(void *))dlsym(RTLD_NEXT, "curl_free");
    if (pointer && pointer == (void *)last_handle) {
        curl_url_cleanup((CURLU *)pointer);
        return;
    }
    real(pointer);
}
