// sweep runs ggml's own C reference conversions, compiled unmodified from a
// ggml checkout: this file includes ggml-quants.c itself, so that the
// file-static best_index_mxfp4 is called as ggml compiles it.
//
//   sweep e2m1|fp16|bf16 [threads]  the codes of all 2^32 float32 inputs,
//                                   in input order, to stdout (1 byte per
//                                   E2M1 code, 16-bit codes little-endian)
//   sweep e8m0-decode               ggml_e8m0_to_fp32 of codes 0..255:
//                                   256 float32 bit patterns, little-endian
//   sweep q8_1|mxfp4                float32 values on stdin (a multiple of
//                                   32) -> quantize_row_{q8_1,mxfp4}_ref
//                                   blocks on stdout
#include "ggml-quants.c"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 24)

enum op { OP_E2M1, OP_FP16, OP_BF16 };

struct job {
    enum op op;
    uint32_t start;
    uint8_t *out;
};

static void *run(void *arg) {
    struct job *j = arg;
    for (uint32_t k = 0; k < CHUNK; k++) {
        uint32_t b = j->start + k;
        float x;
        memcpy(&x, &b, 4);
        switch (j->op) {
        case OP_E2M1:
            // Unit scale: quantize_row_mxfp4_ref passes
            // d = GGML_E8M0_TO_FP32_HALF(e), 0.5 for e = 127, and
            // kvalues_mxfp4 are twice the E2M1 values.
            j->out[k] = (uint8_t)best_index_mxfp4(x, 0.5f);
            break;
        case OP_FP16: {
            ggml_fp16_t h = ggml_compute_fp32_to_fp16(x);
            j->out[2 * k] = (uint8_t)h;
            j->out[2 * k + 1] = (uint8_t)(h >> 8);
            break;
        }
        case OP_BF16: {
            ggml_bf16_t h = ggml_compute_fp32_to_bf16(x);
            j->out[2 * k] = (uint8_t)h.bits;
            j->out[2 * k + 1] = (uint8_t)(h.bits >> 8);
            break;
        }
        }
    }
    return NULL;
}

static int sweep(enum op op, int width, int threads) {
    struct job *jobs = calloc(threads, sizeof *jobs);
    pthread_t *tids = calloc(threads, sizeof *tids);
    for (int t = 0; t < threads; t++) {
        jobs[t].out = malloc((size_t)CHUNK * width);
        if (!jobs[t].out) return 1;
    }
    for (uint64_t c = 0; c < 256; c += threads) {
        int n = 256 - c < (uint64_t)threads ? (int)(256 - c) : threads;
        for (int t = 0; t < n; t++) {
            jobs[t].op = op;
            jobs[t].start = (uint32_t)((c + t) * CHUNK);
            pthread_create(&tids[t], NULL, run, &jobs[t]);
        }
        for (int t = 0; t < n; t++) {
            pthread_join(tids[t], NULL);
            if (fwrite(jobs[t].out, width, CHUNK, stdout) != CHUNK) return 1;
        }
    }
    return fflush(stdout) != 0;
}

// blocks quantizes float32 values from stdin, one row of n at a time.
static int blocks(int mxfp4) {
    size_t cap = 1 << 16, n = 0, got;
    float *x = malloc(cap * sizeof *x);
    while ((got = fread(x + n, sizeof *x, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) x = realloc(x, (cap *= 2) * sizeof *x);
    }
    if (n % 32 != 0) {
        fprintf(stderr, "sweep: %zu values are not a whole number of 32-value blocks\n", n);
        return 2;
    }
    size_t nb = n / 32;
    if (mxfp4) {
        block_mxfp4 *y = calloc(nb, sizeof *y);
        quantize_row_mxfp4_ref(x, y, (int64_t)n);
        return fwrite(y, sizeof *y, nb, stdout) != nb;
    }
    block_q8_1 *y = calloc(nb, sizeof *y);
    quantize_row_q8_1_ref(x, y, (int64_t)n);
    return fwrite(y, sizeof *y, nb, stdout) != nb;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sweep e2m1|fp16|bf16 [threads] | e8m0-decode | q8_1 | mxfp4\n");
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (threads < 1) threads = 1;
    if (!strcmp(argv[1], "e2m1")) return sweep(OP_E2M1, 1, threads);
    if (!strcmp(argv[1], "fp16")) return sweep(OP_FP16, 2, threads);
    if (!strcmp(argv[1], "bf16")) return sweep(OP_BF16, 2, threads);
    if (!strcmp(argv[1], "e8m0-decode")) {
        for (int c = 0; c < 256; c++) {
            float f = ggml_e8m0_to_fp32((uint8_t)c);
            uint32_t b;
            memcpy(&b, &f, 4);
            uint8_t le[4] = {(uint8_t)b, (uint8_t)(b >> 8), (uint8_t)(b >> 16), (uint8_t)(b >> 24)};
            fwrite(le, 1, 4, stdout);
        }
        return fflush(stdout) != 0;
    }
    if (!strcmp(argv[1], "q8_1")) return blocks(0);
    if (!strcmp(argv[1], "mxfp4")) return blocks(1);
    fprintf(stderr, "sweep: unknown op %s\n", argv[1]);
    return 2;
}
