// gguf runs ggml's own C reference block functions, compiled unmodified
// from a ggml checkout (src/ggml-quants.c, src/ggml-cpu/quants.c, linked
// with src/ggml.c), on files the Go side wrote (see README.md):
//
//   gguf quantize TYPE IN OUT     float32 values -> quantize_row_TYPE_ref
//                                 blocks
//   gguf dequantize TYPE IN OUT   blocks -> dequantize_row_TYPE float32
//   gguf vecdot DOT N W A OUT     rows of N elements: weight blocks from W,
//                                 float32 activations from A quantized by
//                                 quantize_row_q8_{0,K}_ref, then
//                                 ggml_vec_dot_DOT_generic; one float32
//                                 per row
//
// Output buffers are zeroed before each call (quantize_row_q8_K_ref leaves
// bsums of an all-zero block unwritten).
#include "ggml-quants.h"
#include "ggml-cpu/quants.h"
#include "ggml-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ggml_table_f32_f16 is what ggml_cpu_init fills; the generic dot
// products read fp16 scales through it on x86-64 without F16C.
float ggml_table_f32_f16[1 << 16];

typedef void (*quant_fn)(const float *, void *, int64_t);
typedef void (*dequant_fn)(const void *, float *, int64_t);

struct type {
    const char *name;
    int elems, bytes;
    quant_fn q;
    dequant_fn dq;
};

#define T(n, e, s, q, d) {n, e, (int)sizeof(s), (quant_fn)(q), (dequant_fn)(d)}
static const struct type types[] = {
    T("q4_0", QK4_0, block_q4_0, quantize_row_q4_0_ref, dequantize_row_q4_0),
    T("q4_1", QK4_1, block_q4_1, quantize_row_q4_1_ref, dequantize_row_q4_1),
    T("q5_0", QK5_0, block_q5_0, quantize_row_q5_0_ref, dequantize_row_q5_0),
    T("q5_1", QK5_1, block_q5_1, quantize_row_q5_1_ref, dequantize_row_q5_1),
    T("q8_0", QK8_0, block_q8_0, quantize_row_q8_0_ref, dequantize_row_q8_0),
    T("q2_K", QK_K, block_q2_K, quantize_row_q2_K_ref, dequantize_row_q2_K),
    T("q3_K", QK_K, block_q3_K, quantize_row_q3_K_ref, dequantize_row_q3_K),
    T("q4_K", QK_K, block_q4_K, quantize_row_q4_K_ref, dequantize_row_q4_K),
    T("q5_K", QK_K, block_q5_K, quantize_row_q5_K_ref, dequantize_row_q5_K),
    T("q6_K", QK_K, block_q6_K, quantize_row_q6_K_ref, dequantize_row_q6_K),
    T("q8_K", QK_K, block_q8_K, quantize_row_q8_K_ref, dequantize_row_q8_K),
    T("iq4_nl", QK4_NL, block_iq4_nl, NULL, dequantize_row_iq4_nl),
    T("iq4_xs", QK_K, block_iq4_xs, NULL, dequantize_row_iq4_xs),
    T("tq1_0", QK_K, block_tq1_0, quantize_row_tq1_0_ref, dequantize_row_tq1_0),
    T("tq2_0", QK_K, block_tq2_0, quantize_row_tq2_0_ref, dequantize_row_tq2_0),
    T("nvfp4", QK_NVFP4, block_nvfp4, quantize_row_nvfp4_ref, dequantize_row_nvfp4),
    T("q1_0", QK1_0, block_q1_0, quantize_row_q1_0_ref, dequantize_row_q1_0),
    T("q2_0", QK2_0, block_q2_0, quantize_row_q2_0_ref, dequantize_row_q2_0),
};

typedef void (*dot_fn)(int, float *, size_t, const void *, size_t, const void *, size_t, int);

static const struct dot {
    const char *name, *w, *act;
    dot_fn f;
} dots[] = {
    {"q4_0_q8_0", "q4_0", "q8_0", ggml_vec_dot_q4_0_q8_0_generic},
    {"q8_0_q8_0", "q8_0", "q8_0", ggml_vec_dot_q8_0_q8_0_generic},
    {"q4_K_q8_K", "q4_K", "q8_K", ggml_vec_dot_q4_K_q8_K_generic},
    {"q6_K_q8_K", "q6_K", "q8_K", ggml_vec_dot_q6_K_q8_K_generic},
};

static const struct type *lookup(const char *name) {
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(types[i].name, name)) return &types[i];
    fprintf(stderr, "gguf: unknown type %s\n", name);
    exit(2);
}

static void *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(len ? len : 1);
    if (fread(buf, 1, len, f) != (size_t)len) { perror(path); exit(1); }
    fclose(f);
    *n = len;
    return buf;
}

static void spit(const char *path, const void *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) { perror(path); exit(1); }
}

int main(int argc, char **argv) {
    for (int i = 0; i < (1 << 16); i++) ggml_table_f32_f16[i] = ggml_compute_fp16_to_fp32((ggml_fp16_t)i);
    if (argc == 5 && !strcmp(argv[1], "quantize")) {
        const struct type *t = lookup(argv[2]);
        size_t n;
        float *x = slurp(argv[3], &n);
        n /= sizeof(float);
        if (!t->q || n % t->elems) { fprintf(stderr, "gguf: cannot quantize %zu values to %s\n", n, t->name); return 2; }
        size_t nb = n / t->elems;
        void *y = calloc(nb, t->bytes);
        // one block per call, as a row of one block: the _ref functions
        // keep no state between blocks, and a per-block call keeps a
        // fault local
        for (size_t i = 0; i < nb; i++)
            t->q(x + i * t->elems, (char *)y + i * t->bytes, t->elems);
        spit(argv[4], y, nb * t->bytes);
        return 0;
    }
    if (argc == 5 && !strcmp(argv[1], "dequantize")) {
        const struct type *t = lookup(argv[2]);
        size_t n;
        char *x = slurp(argv[3], &n);
        if (n % t->bytes) { fprintf(stderr, "gguf: %zu bytes are not whole %s blocks\n", n, t->name); return 2; }
        size_t nb = n / t->bytes;
        float *y = calloc(nb * t->elems, sizeof(float));
        t->dq(x, y, (int64_t)(nb * t->elems));
        spit(argv[4], y, nb * t->elems * sizeof(float));
        return 0;
    }
    if (argc == 7 && !strcmp(argv[1], "vecdot")) {
        const struct dot *d = NULL;
        for (size_t i = 0; i < sizeof dots / sizeof dots[0]; i++)
            if (!strcmp(dots[i].name, argv[2])) d = &dots[i];
        if (!d) { fprintf(stderr, "gguf: unknown dot %s\n", argv[2]); return 2; }
        const struct type *tw = lookup(d->w), *ta = lookup(d->act);
        int k = atoi(argv[3]);
        size_t nw, na;
        char *w = slurp(argv[4], &nw);
        float *a = slurp(argv[5], &na);
        na /= sizeof(float);
        size_t wrow = (size_t)k / tw->elems * tw->bytes, arow = (size_t)k / ta->elems * ta->bytes;
        if (k <= 0 || k % tw->elems || k % ta->elems || nw % wrow || na % k || nw / wrow != na / k) {
            fprintf(stderr, "gguf: vecdot %s: %zu weight bytes and %zu activations are not rows of %d\n", d->name, nw, na, k);
            return 2;
        }
        size_t rows = na / k;
        float *out = calloc(rows, sizeof(float));
        void *q8 = calloc(1, arow);
        for (size_t r = 0; r < rows; r++) {
            memset(q8, 0, arow);
            ta->q(a + r * k, q8, k);
            d->f(k, &out[r], 0, w + r * wrow, 0, q8, 0, 1);
        }
        spit(argv[6], out, rows * sizeof(float));
        return 0;
    }
    fprintf(stderr, "usage: gguf quantize|dequantize TYPE IN OUT | gguf vecdot DOT N W A OUT\n");
    return 2;
}
