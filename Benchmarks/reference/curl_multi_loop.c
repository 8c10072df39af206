// The libcurl ceiling for scripts/bench-transports.sh: a bare multi loop in C, with none of
// CurlTransport's work (no Swift tasks, no thread hand-off, no header parsing, easy handles reused
// without a reset). It fetches URL over CONNECTIONS handles for DURATION seconds after a one-second
// warm-up and prints one JSON line like serverapi-transport-bench's, with the process's CPU time per
// request (getrusage user + system over the measured seconds) and its peak RSS (ru_maxrss).
//
// Two loops, as CurlTransport has:
//   perform  curl_multi_perform + curl_multi_poll (client "libcurl-c"): walks every transfer and every
//            socket on each turn.
//   socket   curl_multi_socket_action on an epoll set, CURLMOPT_SOCKETFUNCTION/TIMERFUNCTION (client
//            "libcurl-c-epoll", Linux only): a turn costs only what is ready. libcurl at its best.
//
//   cc -O2 curl_multi_loop.c -lcurl -o curl_multi_loop && ./curl_multi_loop URL CONNECTIONS DURATION [perform|socket]
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

static size_t discard(char *data, size_t size, size_t count, void *context) {
    (void)data;
    (void)context;
    return size * count;
}

static double now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return time.tv_sec + time.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The run's state, shared by both loops.
static CURLM *multi;
static double *started, measuring;
static double *latency;
static size_t capacity = 1 << 22, latencies = 0;
static long requests = 0, failures = 0;

/// Reads completions: records each, and starts the handle again at once.
static void collect(void) {
    CURLMsg *message;
    int queued = 0;
    while ((message = curl_multi_info_read(multi, &queued))) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL *easy = message->easy_handle;
        void *context = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &context);
        int index = (int)(long)context;
        double finished = now();
        if (message->data.result != CURLE_OK) failures++;
        if (finished >= measuring) {
            requests++;
            if (latencies < capacity) latency[latencies++] = finished - started[index];
        }
        curl_multi_remove_handle(multi, easy);
        started[index] = now();
        curl_multi_add_handle(multi, easy);
    }
}

#ifdef __linux__
static int epoll_set = -1;
/// When libcurl wants its timeout action (CLOCK_MONOTONIC seconds); negative for never.
static double timer_due = -1;

static int on_socket(CURL *easy, curl_socket_t socket, int what, void *context, void *socketp) {
    (void)easy;
    (void)context;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(epoll_set, EPOLL_CTL_DEL, socket, NULL);
        curl_multi_assign(multi, socket, NULL);
        return 0;
    }
    struct epoll_event event = {0};
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = socket;
    if (socketp) {
        if (epoll_ctl(epoll_set, EPOLL_CTL_MOD, socket, &event) != 0) epoll_ctl(epoll_set, EPOLL_CTL_ADD, socket, &event);
    } else {
        if (epoll_ctl(epoll_set, EPOLL_CTL_ADD, socket, &event) != 0) epoll_ctl(epoll_set, EPOLL_CTL_MOD, socket, &event);
        curl_multi_assign(multi, socket, (void *)1);
    }
    return 0;
}

static int on_timer(CURLM *handle, long milliseconds, void *context) {
    (void)handle;
    (void)context;
    timer_due = milliseconds < 0 ? -1 : now() + milliseconds / 1e3;
    return 0;
}

static void run_due_timers(void) {
    if (timer_due < 0 || timer_due > now()) return;
    timer_due = -1;
    int running = 0;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    collect();
}

static void run_socket(double end) {
    struct epoll_event events[256];
    int running = 0;
    for (double time = now(); time < end; time = now()) {
        run_due_timers();
        int timeout = 1000;
        if (timer_due >= 0) {
            double left = (timer_due - now()) * 1e3;
            timeout = left <= 0 ? 0 : left > 1000 ? 1000 : (int)left + 1;
        }
        int count = epoll_wait(epoll_set, events, 256, timeout);
        for (int i = 0; i < count; i++) {
            unsigned flags = events[i].events;
            int mask = ((flags & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((flags & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                       ((flags & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(multi, events[i].data.fd, mask, &running);
            collect();
        }
    }
}
#endif

static void run_perform(double end) {
    while (now() < end) {
        int running = 0;
        curl_multi_perform(multi, &running);
        collect();
        curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s URL CONNECTIONS DURATION [perform|socket]\n", argv[0]);
        return 1;
    }
    const char *url = argv[1];
    int connections = atoi(argv[2]);
    double duration = atof(argv[3]);
    int socket_mode = argc == 5 && strcmp(argv[4], "socket") == 0;
    if (connections < 1 || duration <= 0) return 1;
#ifndef __linux__
    if (socket_mode) {
        fprintf(stderr, "the socket loop needs epoll (Linux)\n");
        return 1;
    }
#endif
    curl_global_init(CURL_GLOBAL_ALL);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)connections);
#ifdef __linux__
    if (socket_mode) {
        epoll_set = epoll_create1(EPOLL_CLOEXEC);
        curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    }
#endif
    CURL **handles = calloc((size_t)connections, sizeof(CURL *));
    started = calloc((size_t)connections, sizeof(double));
    latency = malloc(capacity * sizeof(double));
    for (int index = 0; index < connections; index++) {
        handles[index] = curl_easy_init();
        curl_easy_setopt(handles[index], CURLOPT_URL, url);
        curl_easy_setopt(handles[index], CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(handles[index], CURLOPT_PRIVATE, (void *)(long)index);
        started[index] = now();
        curl_multi_add_handle(multi, handles[index]);
    }
    double begin = now();
    measuring = begin + 1.0;
    double end = measuring + duration;
    // The CPU time is read when measuring starts: the warm-up runs the same loop until then.
#ifdef __linux__
    if (socket_mode) run_socket(measuring); else
#endif
    run_perform(measuring);
    double cpu_start = cpu_seconds();
#ifdef __linux__
    if (socket_mode) run_socket(end); else
#endif
    run_perform(end);
    double seconds = now() - measuring, cpu = cpu_seconds() - cpu_start;
    qsort(latency, latencies, sizeof(double), compare);
    double p50 = latencies ? latency[latencies / 2] * 1e6 : 0, p99 = latencies ? latency[latencies * 99 / 100] * 1e6 : 0;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    char mode[32];
    if (connections == 1) snprintf(mode, sizeof mode, "seq"); else snprintf(mode, sizeof mode, "c%d", connections);
    printf("{\"client\":\"%s\",\"mode\":\"%s\",\"requests\":%ld,\"failures\":%ld,\"seconds\":%.6f,"
           "\"requestsPerSecond\":%.1f,\"p50Microseconds\":%.1f,\"p99Microseconds\":%.1f,"
           "\"cpuMicrosecondsPerRequest\":%.2f,\"peakRSSKilobytes\":%ld}\n",
           socket_mode ? "libcurl-c-epoll" : "libcurl-c", mode, requests, failures, seconds, requests / seconds, p50,
           p99, requests ? cpu * 1e6 / requests : 0, usage.ru_maxrss);
    return failures ? 2 : 0;
}
