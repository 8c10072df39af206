#ifndef SERVERAPIKIT_CCURL_SHIM_H
#define SERVERAPIKIT_CCURL_SHIM_H

// Typed wrappers for libcurl's variadic calls, which Swift cannot call directly.
// Each wrapper passes exactly the C type libcurl expects for the option, so a Swift
// caller cannot hand curl_easy_setopt an Int where it reads a pointer.

#include <curl/curl.h>

typedef size_t (*ccurl_write_callback)(char *data, size_t size, size_t count, void *context);
typedef size_t (*ccurl_read_callback)(char *buffer, size_t size, size_t count, void *context);
typedef int (*ccurl_xferinfo_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                       curl_off_t upload_total, curl_off_t upload_now);
typedef int (*ccurl_seek_callback)(void *context, curl_off_t offset, int origin);
typedef int (*ccurl_trailer_callback)(struct curl_slist **list, void *context);

/// curl_global_init(CURL_GLOBAL_ALL): the macro is an expression Swift does not import.
static inline CURLcode ccurl_global_init_all(void) { return curl_global_init(CURL_GLOBAL_ALL); }

// MARK: curl_easy_setopt

static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_write_function(CURL *handle, CURLoption option,
                                                        ccurl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_read_function(CURL *handle, ccurl_read_callback value) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, value);
}

static inline CURLcode ccurl_easy_setopt_xferinfo_function(CURL *handle, ccurl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

static inline CURLcode ccurl_easy_setopt_seek_function(CURL *handle, ccurl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

static inline CURLcode ccurl_easy_setopt_trailer_function(CURL *handle, ccurl_trailer_callback value) {
    return curl_easy_setopt(handle, CURLOPT_TRAILERFUNCTION, value);
}

/// Restricts a transfer (and its redirects) to http and https. CURLOPT_PROTOCOLS_STR arrived in libcurl 7.85 and
/// deprecated the bitmask CURLOPT_PROTOCOLS; older headers (Ubuntu 22.04 ships 7.81) have only the bitmask. The
/// result is ignored by the caller: a libcurl older than its headers may not know the option.
static inline CURLcode ccurl_easy_restrict_to_http(CURL *handle) {
#if LIBCURL_VERSION_NUM >= 0x075500
    return curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    return curl_easy_setopt(handle, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

// MARK: curl_easy_getinfo

static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

// MARK: curl_multi_setopt

static inline CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

static inline CURLMcode ccurl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value) {
    return curl_multi_setopt(handle, option, value);
}

/// CURLMOPT_SOCKETFUNCTION: libcurl tells the loop which sockets to watch, and for what.
static inline CURLMcode ccurl_multi_setopt_socket_function(CURLM *handle, curl_socket_callback value) {
    return curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, value);
}

/// CURLMOPT_TIMERFUNCTION: libcurl tells the loop when it next needs a timeout action.
static inline CURLMcode ccurl_multi_setopt_timer_function(CURLM *handle, curl_multi_timer_callback value) {
    return curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, value);
}

/// CURL_SOCKET_TIMEOUT: curl_multi_socket_action's "no socket, run the timers" (a macro of a macro).
static inline curl_socket_t ccurl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }

/// CURLAUTH_DIGEST: a macro with a cast, which Swift does not import.
static inline unsigned long ccurl_auth_digest(void) { return CURLAUTH_DIGEST; }

// MARK: WebSockets

/// CURLINFO_ACTIVESOCKET: the socket of a connect-only handle's connection, for the loop to watch.
static inline curl_socket_t ccurl_active_socket(CURL *handle) {
    curl_socket_t socket = CURL_SOCKET_BAD;
    if (curl_easy_getinfo(handle, CURLINFO_ACTIVESOCKET, &socket) != CURLE_OK) return CURL_SOCKET_BAD;
    return socket;
}

#ifdef __linux__
// MARK: epoll, for the socket interface (Linux only; Swift's Glibc module leaves <sys/epoll.h> out)

#include <errno.h>
#include <sys/epoll.h>

/// A descriptor epoll found ready, with what libcurl's curl_multi_socket_action takes for it.
struct ccurl_ready {
    int fd;
    /// CURL_CSELECT_IN, _OUT and _ERR.
    int mask;
};

/// A new epoll set (close-on-exec), or -1.
static inline int ccurl_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

#include <sys/eventfd.h>
/// A non-blocking, close-on-exec eventfd: one descriptor for a loop's wake-up where a pipe takes two.
static inline int ccurl_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// Watches fd for what libcurl's socket callback asked (CURL_POLL_IN, _OUT, _INOUT), adding it to the set or
/// changing it there: known says which to try first (either falls back to the other, so a descriptor number
/// reused before libcurl said REMOVE for its old socket still works).
static inline int ccurl_epoll_watch(int epoll, int fd, int what, int known) {
    struct epoll_event event = {0};
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = fd;
    int first = known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(epoll, first, fd, &event) == 0) return 0;
    if (errno != (known ? ENOENT : EEXIST)) return -1;
    return epoll_ctl(epoll, known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}

/// Stops watching fd (an error for a descriptor already closed is harmless: it left the set then).
static inline int ccurl_epoll_unwatch(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

/// Waits up to timeout milliseconds (-1: forever) for at most capacity (<= 256) ready descriptors.
/// Returns how many it wrote to ready, 0 on timeout or a signal, -1 on another error.
static inline int ccurl_epoll_wait(int epoll, struct ccurl_ready *ready, int capacity, int timeout) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epoll, events, capacity, timeout);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        unsigned int flags = events[i].events;
        ready[i].fd = events[i].data.fd;
        ready[i].mask = ((flags & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((flags & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                        ((flags & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    }
    return count;
}
#endif

#endif
