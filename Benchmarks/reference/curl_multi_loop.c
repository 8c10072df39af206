// The libcurl ceiling for scripts/bench-transports.sh: a bare multi loop in C, with none of
// CurlTransport's work (no Swift tasks, no thread hand-off, no header parsing, easy handles reused
// without a reset). It fetches URL over CONNECTIONS handles for DURATION seconds after a one-second
// warm-up and prints one JSON line like serverapi-transport-bench's.
//
//   cc -O2 curl_multi_loop.c -lcurl -o curl_multi_loop && ./curl_multi_loop URL CONNECTIONS DURATION
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s URL CONNECTIONS DURATION\n", argv[0]);
        return 1;
    }
    const char *url = argv[1];
    int connections = atoi(argv[2]);
    double duration = atof(argv[3]);
    if (connections < 1 || duration <= 0) return 1;
    curl_global_init(CURL_GLOBAL_ALL);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)connections);
    CURL **handles = calloc((size_t)connections, sizeof(CURL *));
    double *started = calloc((size_t)connections, sizeof(double));
    size_t capacity = 1 << 20, latencies = 0;
    double *latency = malloc(capacity * sizeof(double));
    for (int index = 0; index < connections; index++) {
        handles[index] = curl_easy_init();
        curl_easy_setopt(handles[index], CURLOPT_URL, url);
        curl_easy_setopt(handles[index], CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(handles[index], CURLOPT_PRIVATE, (void *)(long)index);
        started[index] = now();
        curl_multi_add_handle(multi, handles[index]);
    }
    double begin = now(), measuring = begin + 1.0, end = measuring + duration;
    long requests = 0, failures = 0;
    for (double time = begin; time < end; time = now()) {
        int running = 0, queued = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
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
        curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    double seconds = now() - measuring;
    qsort(latency, latencies, sizeof(double), compare);
    double p50 = latencies ? latency[latencies / 2] * 1e6 : 0, p99 = latencies ? latency[latencies * 99 / 100] * 1e6 : 0;
    printf("{\"client\":\"libcurl-c\",\"mode\":\"%s\",\"requests\":%ld,\"failures\":%ld,\"seconds\":%.6f,"
           "\"requestsPerSecond\":%.1f,\"p50Microseconds\":%.1f,\"p99Microseconds\":%.1f}\n",
           connections == 1 ? "seq" : "c64", requests, failures, seconds, requests / seconds, p50, p99);
    return failures ? 2 : 0;
}
