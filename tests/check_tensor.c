/* check_tensor.c - algorithms/tensor in process: data parallelism's gradient buckets
 * (tensor_dp_buckets) on Megatron's shapes, against the count expected from the layer
 * sizes alone. The algorithm's runs through the CLI are in sim_tensor.c. */
#include <check.h>
#include <math.h>

#include "algorithms/tensor.h"
#include "check_util.h"

/* Buckets expected from the layer sizes alone: a bucket closes on the layer that brings it
 * to `cap` bytes, so it holds k = ceil(cap / layer bytes) layers ((k - 1) layers stay below
 * cap); the L layers fill ceil(L / k) buckets, the last possibly partial. The embedding
 * comes last: it joins a partial last bucket, and makes its own when k divides L. */
static long expected_buckets(double layers, double layer_bytes, double cap, int vocab)
{
  double k = ceil(cap / layer_bytes);
  return (long)ceil(layers / k) + (vocab && fmod(layers, k) == 0 ? 1 : 0);
}

/* tensor_dp_buckets on Megatron's 8.3B shape (t = 8, h 3072, 72 layers, V 51200, s 1024,
 * fp16) and on sim_tensor's small shapes: the buckets' elements add up to
 * tensor_dp_elements exactly, each bucket but the last reaches the cap and none holds a
 * layer more than it needs, the count is expected_buckets's, and the last bucket ends with
 * the last unit (the embedding, or layer 0). */
START_TEST(test_tensor_dp_buckets)
{
  static const struct {
    size_t t, h, heads, L, V, s;
    double cap;
  } cases[] = {{8, 3072, 32, 72, 51200, 1024, 26214400},   {8, 3072, 32, 72, 51200, 1024, 1},
               {8, 3072, 32, 72, 0, 1024, 26214400 * 4.0}, {4, 96, 8, 5, 128, 12, 150000},
               {4, 96, 8, 6, 128, 12, 150000},             {4, 96, 8, 5, 0, 12, 1e18}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tensor_params p = {.ranks = cases[c].t, .hidden = cases[c].h, .heads = cases[c].heads, .layers = cases[c].L,
                       .seq = cases[c].s, .microbatch = 8, .microbatches = 1, .steps = 1, .dp = 2,
                       .vocab = cases[c].V, .dp_overlap = 1, .bucket_bytes = cases[c].cap};
    double elems[80], h = (double)p.hidden, eb = 2;
    size_t last[80], nb = tensor_dp_buckets(&p, 2, NULL, NULL);
    ck_assert_uint_le(nb, p.layers + 1);
    ck_assert_uint_eq(tensor_dp_buckets(&p, 2, elems, last), nb);
    double layer = (12 * h * h + 7 * h) / (double)p.ranks + 6 * h, sum = 0;
    for (size_t b = 0; b < nb; b++) {
      sum += elems[b];
      if (b + 1 < nb)
        ck_assert_msg(elems[b] * eb >= p.bucket_bytes && (elems[b] - layer) * eb < p.bucket_bytes,
                      "case %zu bucket %zu: %.17g elements, cap %.17g bytes", c, b, elems[b], p.bucket_bytes);
    }
    ck_assert_msg(sum == tensor_dp_elements(&p), "case %zu: buckets hold %.17g elements, want %.17g", c, sum,
                  tensor_dp_elements(&p));
    ck_assert_uint_eq(last[nb - 1], p.layers + (p.vocab ? 1 : 0) - 1);
    ck_assert_int_eq((long)nb, expected_buckets((double)p.layers, layer * eb, p.bucket_bytes, p.vocab > 0));
  }
}
END_TEST

static Suite *tensor_suite(void)
{
  Suite *s = suite_create("tensor");
  ADD_TCASE(s, "dp buckets", test_tensor_dp_buckets);
  return s;
}

CHECK_MAIN(tensor_suite)
