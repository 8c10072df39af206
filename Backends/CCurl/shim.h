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

/// CURLAUTH_DIGEST: a macro with a cast, which Swift does not import.
static inline unsigned long ccurl_auth_digest(void) { return CURLAUTH_DIGEST; }

#endif
