// The libcurl ceiling for scripts/bench-transports.sh: a bare multi loop in C, with none of
// CurlTransport's work (no Swift tasks, no thread hand-off, no header parsing, easy handles reused
// without a reset). It fetches URL over CONNECTIONS handles for DURATION seconds after a one-second
// warm-up and prints one JSON line like serverapi-transport-bench's, with the process's CPU time per
// request (getrusage user + system over the measured seconds) and its peak RSS (ru_maxrss).
//
// Two ways to drive libcurl, as CurlTransport's loops have:
//   perform  curl_multi_perform + curl_multi_poll (client "libcurl-c"): walks every transfer and every
//            socket on each turn.
//   socket   curl_multi_socket_action on an epoll set, CURLMOPT_SOCKETFUNCTION/TIMERFUNCTION (client
//            "libcurl-c-epoll", Linux only): a turn costs only what is ready. libcurl at its best.
//
// LOOPS (1 by default) runs that many loops, each on its own thread with its own multi handle (and so its own
// connection pool) and CONNECTIONS / LOOPS of the handles, as CurlTransport's loops with `.roundRobin`: the
// floor for a transport with as many loops. With libcurl 8.14 it is also what keeps a thousand transfers to
// one host fast: 8.14 walks the multi's pool of busy connections for every transfer that starts, at a cost
// per connection that grows with the multi's transfer count (Benchmarks/results/libcurl-814.md).
//
//   cc -O2 curl_multi_loop.c -lcurl -lpthread -o curl_multi_loop
//   ./curl_multi_loop URL CONNECTIONS DURATION [perform|socket] [LOOPS]
//
// CURL_MULTI_LOOP_WARMUP=SECONDS sets the warm-up (1 by default): `bench-transports.sh --instructions` sets 0, so
// that every request the process makes is one it counts.
//
// CURL_MULTI_LOOP_HTTP_VERSION=1.1|2|3-only and CURL_MULTI_LOOP_CA=FILE (an https server's CA) are for
// `bench-transports.sh --http3`: HTTP/2 and HTTP/3 handles wait for a connection they can multiplex on
// (CURLOPT_PIPEWAIT), as CurlTransport's do, rather than open one each. Without them: libcurl's default (HTTP/1.1
// for http).
#include <curl/curl.h>
#include <pthread.h>
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

// The run's clock, shared by every loop (read-only once the loops start).
static double measuring, end_time;
static size_t capacity = 1 << 22;

// One loop's state: a multi handle, its share of the handles and what it measured.
struct loop {
    CURLM *multi;
    double *started;
    double *latency;
    size_t latencies;
    long requests, failures;
    /// How many handles have finished a transfer (each counted once), and which.
    int warmed;
    char *finished_once;
#ifdef __linux__
    int epoll_set;
    /// When libcurl wants its timeout action (CLOCK_MONOTONIC seconds); negative for never.
    double timer_due;
#endif
};

/// Reads completions: records each, and starts the handle again at once.
static void collect(struct loop *loop) {
    CURLMsg *message;
    int queued = 0;
    while ((message = curl_multi_info_read(loop->multi, &queued))) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL *easy = message->easy_handle;
        void *context = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &context);
        int index = (int)(long)context;
        double finished = now();
        if (message->data.result != CURLE_OK) loop->failures++;
        if (!loop->finished_once[index]) {
            loop->finished_once[index] = 1;
            loop->warmed++;
        }
        if (finished >= measuring) {
            loop->requests++;
            if (loop->latencies < capacity) loop->latency[loop->latencies++] = finished - loop->started[index];
        }
        curl_multi_remove_handle(loop->multi, easy);
        loop->started[index] = now();
        curl_multi_add_handle(loop->multi, easy);
    }
}

#ifdef __linux__
static int on_socket(CURL *easy, curl_socket_t socket, int what, void *context, void *socketp) {
    (void)easy;
    struct loop *loop = context;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(loop->epoll_set, EPOLL_CTL_DEL, socket, NULL);
        curl_multi_assign(loop->multi, socket, NULL);
        return 0;
    }
    struct epoll_event event = {0};
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = socket;
    if (socketp) {
        if (epoll_ctl(loop->epoll_set, EPOLL_CTL_MOD, socket, &event) != 0)
            epoll_ctl(loop->epoll_set, EPOLL_CTL_ADD, socket, &event);
    } else {
        if (epoll_ctl(loop->epoll_set, EPOLL_CTL_ADD, socket, &event) != 0)
            epoll_ctl(loop->epoll_set, EPOLL_CTL_MOD, socket, &event);
        curl_multi_assign(loop->multi, socket, (void *)1);
    }
    return 0;
}

static int on_timer(CURLM *handle, long milliseconds, void *context) {
    (void)handle;
    struct loop *loop = context;
    loop->timer_due = milliseconds < 0 ? -1 : now() + milliseconds / 1e3;
    return 0;
}

static void run_due_timers(struct loop *loop) {
    if (loop->timer_due < 0 || loop->timer_due > now()) return;
    loop->timer_due = -1;
    int running = 0;
    curl_multi_socket_action(loop->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    collect(loop);
}

static void run_socket(struct loop *loop, double end) {
    struct epoll_event events[256];
    int running = 0;
    for (double time = now(); time < end; time = now()) {
        run_due_timers(loop);
        int timeout = 1000;
        if (loop->timer_due >= 0) {
            double left = (loop->timer_due - now()) * 1e3;
            timeout = left <= 0 ? 0 : left > 1000 ? 1000 : (int)left + 1;
        }
        int count = epoll_wait(loop->epoll_set, events, 256, timeout);
        for (int i = 0; i < count; i++) {
            unsigned flags = events[i].events;
            int mask = ((flags & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((flags & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                       ((flags & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(loop->multi, events[i].data.fd, mask, &running);
            collect(loop);
        }
    }
}
#endif

static void run_perform(struct loop *loop, double end) {
    while (now() < end) {
        int running = 0;
        curl_multi_perform(loop->multi, &running);
        collect(loop);
        curl_multi_poll(loop->multi, NULL, 0, 1000, NULL);
    }
}

static int socket_mode = 0;

static void run(struct loop *loop, double end) {
#ifdef __linux__
    if (socket_mode) {
        run_socket(loop, end);
        return;
    }
#endif
    run_perform(loop, end);
}

/// A loop other than the first, on a thread of its own: warm-up and measured seconds in one go.
static void *run_thread(void *context) {
    run(context, end_time);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: %s URL CONNECTIONS DURATION [perform|socket] [LOOPS]\n", argv[0]);
        return 1;
    }
    const char *url = argv[1];
    int connections = atoi(argv[2]);
    double duration = atof(argv[3]);
    socket_mode = argc >= 5 && strcmp(argv[4], "socket") == 0;
    int loops = argc == 6 ? atoi(argv[5]) : 1;
    if (connections < 1 || duration <= 0 || loops < 1 || loops > connections) return 1;
#ifndef __linux__
    if (socket_mode) {
        fprintf(stderr, "the socket loop needs epoll (Linux)\n");
        return 1;
    }
#endif
    const char *version_name = getenv("CURL_MULTI_LOOP_HTTP_VERSION");
    const char *ca_file = getenv("CURL_MULTI_LOOP_CA");
    long version = CURL_HTTP_VERSION_NONE;
    if (version_name && strcmp(version_name, "1.1") == 0) version = CURL_HTTP_VERSION_1_1;
    else if (version_name && strcmp(version_name, "2") == 0) version = CURL_HTTP_VERSION_2TLS;
    else if (version_name && strcmp(version_name, "3-only") == 0) version = CURL_HTTP_VERSION_3ONLY;
    else if (version_name) {
        fprintf(stderr, "CURL_MULTI_LOOP_HTTP_VERSION: 1.1, 2 or 3-only, not %s\n", version_name);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    struct loop *all = calloc((size_t)loops, sizeof(struct loop));
    for (int number = 0; number < loops; number++) {
        struct loop *loop = &all[number];
        // The handles are dealt out evenly: the first loops take one more when they do not divide.
        int count = connections / loops + (number < connections % loops);
        loop->multi = curl_multi_init();
        curl_multi_setopt(loop->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)count);
        // 8.14 caps an idle pool at 4 × the transfers still running (Benchmarks/results/libcurl-814.md): when most of
        // them finish in one turn it closes connections that the next transfers open again, and a TLS connection on
        // GnuTLS costs a read of the CA directory. The pool keeps every connection in the --http3 rows.
        if (version_name) curl_multi_setopt(loop->multi, CURLMOPT_MAXCONNECTS, (long)count);
#ifdef __linux__
        loop->timer_due = -1;
        if (socket_mode) {
            loop->epoll_set = epoll_create1(EPOLL_CLOEXEC);
            curl_multi_setopt(loop->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
            curl_multi_setopt(loop->multi, CURLMOPT_SOCKETDATA, loop);
            curl_multi_setopt(loop->multi, CURLMOPT_TIMERFUNCTION, on_timer);
            curl_multi_setopt(loop->multi, CURLMOPT_TIMERDATA, loop);
        }
#endif
        loop->started = calloc((size_t)count, sizeof(double));
        loop->finished_once = calloc((size_t)count, 1);
        loop->latency = malloc(capacity * sizeof(double));
        for (int index = 0; index < count; index++) {
            CURL *easy = curl_easy_init();
            curl_easy_setopt(easy, CURLOPT_URL, url);
            curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
            curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)(long)index);
            if (version != CURL_HTTP_VERSION_NONE) {
                if (curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, version) != CURLE_OK) {
                    fprintf(stderr, "this libcurl cannot speak HTTP version %s\n", version_name);
                    return 1;
                }
                if (version != CURL_HTTP_VERSION_1_1) curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
            }
            if (ca_file) curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
            loop->started[index] = now();
            curl_multi_add_handle(loop->multi, easy);
        }
    }
    double begin = now();
    const char *warmup = getenv("CURL_MULTI_LOOP_WARMUP");
    measuring = begin + (warmup ? atof(warmup) : 1.0);
    end_time = measuring + duration;
    pthread_t *threads = calloc((size_t)loops, sizeof(pthread_t));
    for (int number = 1; number < loops; number++) pthread_create(&threads[number], NULL, run_thread, &all[number]);
    // The CPU time (the whole process's, every loop's) is read when measuring starts: the warm-up runs the
    // same loop until then.
    run(&all[0], measuring);
    // With one loop and a warm-up, every handle must have finished a transfer before measuring starts, as in the
    // Swift benchmark: over TLS on GnuTLS, each new connection reads the CA directory (/etc/ssl/certs), and 64 of
    // them on a busy machine can take longer than the warm-up and the measured seconds together. When they took
    // longer than the warm-up, it starts again once they are all done: the transfers started while connections
    // were still being set up would have long latencies.
    if (loops == 1 && measuring > begin && all[0].warmed < connections) {
        while (all[0].warmed < connections) run(&all[0], now() + 0.05);
        measuring = now() + (measuring - begin);
        end_time = measuring + duration;
        run(&all[0], measuring);
        // What finished after the first warm-up was counted: it was the warm-up too.
        all[0].requests = 0;
        all[0].latencies = 0;
    }
    double cpu_start = cpu_seconds();
    run(&all[0], end_time);
    for (int number = 1; number < loops; number++) pthread_join(threads[number], NULL);
    double seconds = now() - measuring, cpu = cpu_seconds() - cpu_start;
    long requests = 0, failures = 0;
    size_t latencies = 0;
    for (int number = 0; number < loops; number++) {
        requests += all[number].requests;
        failures += all[number].failures;
        latencies += all[number].latencies;
    }
    double *latency = malloc((latencies ? latencies : 1) * sizeof(double));
    for (int number = 0, at = 0; number < loops; number++) {
        memcpy(latency + at, all[number].latency, all[number].latencies * sizeof(double));
        at += (int)all[number].latencies;
    }
    qsort(latency, latencies, sizeof(double), compare);
    double p50 = latencies ? latency[latencies / 2] * 1e6 : 0, p99 = latencies ? latency[latencies * 99 / 100] * 1e6 : 0;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    char mode[32];
    if (connections == 1) snprintf(mode, sizeof mode, "seq"); else snprintf(mode, sizeof mode, "c%d", connections);
    char loop_field[32] = "";
    if (loops > 1) snprintf(loop_field, sizeof loop_field, ",\"loops\":%d", loops);
    printf("{\"client\":\"%s\",\"mode\":\"%s\"%s,\"requests\":%ld,\"failures\":%ld,\"seconds\":%.6f,"
           "\"requestsPerSecond\":%.1f,\"p50Microseconds\":%.1f,\"p99Microseconds\":%.1f,"
           "\"cpuMicrosecondsPerRequest\":%.2f,\"peakRSSKilobytes\":%ld}\n",
           socket_mode ? "libcurl-c-epoll" : "libcurl-c", mode, loop_field, requests, failures, seconds,
           requests / seconds, p50, p99, requests ? cpu * 1e6 / requests : 0, usage.ru_maxrss);
    return failures ? 2 : 0;
}
