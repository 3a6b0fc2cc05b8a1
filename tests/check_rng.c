/* check_rng.c - Check suite for models/rng: seed range, distinct streams per
 * (role, rank), and the pinned derivation every result depends on. */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "models/rng.h"

#include "check_util.h"

/* mt19937 reads 32 bits of its seed and maps 0 to 4357, so 0 must never come out. */
START_TEST(test_rng_range)
{
  static const uint64_t masters[] = {0, 1, 42, UINT64_MAX};
  for (size_t m = 0; m < sizeof masters / sizeof masters[0]; m++)
    for (int role = -1; role <= 7; role++)
      for (int rank = -2; rank < 100; rank++) {
        unsigned long s = rng_seed_for(masters[m], role, rank);
        ck_assert_uint_ge(s, 1);
        ck_assert_uint_le(s, 4294967295UL); /* 2^32 - 1 */
      }
}
END_TEST

static int cmp_ulong(const void *a, const void *b)
{
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return (x > y) - (x < y);
}

/* 6 roles x 64 ranks: the chance that 384 well-mixed 32-bit seeds collide is
 * about 384^2 / 2^33 < 2e-5, so a collision here means poor mixing. */
START_TEST(test_rng_distinct)
{
  enum { N_ROLES = 6, N_RANKS = 64 };
  unsigned long seeds[N_ROLES * N_RANKS];
  size_t k = 0;
  for (int role = RNG_ROLE_DATA; role <= RNG_ROLE_EVAL; role++)
    for (int rank = 0; rank < N_RANKS; rank++)
      seeds[k++] = rng_seed_for(1, role, rank);
  qsort(seeds, k, sizeof seeds[0], cmp_ulong);
  for (size_t i = 1; i < k; i++)
    ck_assert_uint_ne(seeds[i - 1], seeds[i]);
  /* Neighbouring master seeds must not give neighbouring streams either. */
  ck_assert_uint_ne(rng_seed_for(1, RNG_ROLE_WORKER, 0), rng_seed_for(2, RNG_ROLE_WORKER, 0));
  ck_assert_uint_ne(rng_seed_for(1, RNG_ROLE_WORKER, 0), rng_seed_for(1, RNG_ROLE_PS, 0));
}
END_TEST

/* Pins the derivation: h = sm(1); h = sm(h ^ 4); h = sm(h ^ 0); seed =
 * (h >> 32) % (2^32 - 1) + 1, where sm is splitmix64's output function.
 * Computed once with this code and again independently in Python. Changing the
 * derivation changes every result dtsim produces; update this only on purpose. */
START_TEST(test_rng_known_value)
{
  ck_assert_uint_eq(rng_seed_for(1, RNG_ROLE_WORKER, 0), 1577988422UL);
}
END_TEST

/* rng_create must be exactly mt19937 seeded with rng_seed_for. */
START_TEST(test_rng_create)
{
  gsl_rng *a = rng_create(7, RNG_ROLE_PS, 3);
  gsl_rng *b = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng *c = rng_create(7, RNG_ROLE_PS, 4);
  gsl_rng_set(b, rng_seed_for(7, RNG_ROLE_PS, 3));
  ck_assert_str_eq(gsl_rng_name(a), "mt19937");
  int differ = 0;
  for (int i = 0; i < 100; i++) {
    unsigned long x = gsl_rng_get(a);
    ck_assert_uint_eq(x, gsl_rng_get(b));
    differ |= x != gsl_rng_get(c);
  }
  ck_assert(differ);
  gsl_rng_free(a);
  gsl_rng_free(b);
  gsl_rng_free(c);
}
END_TEST

Suite *rng_suite(void)
{
  Suite *s = suite_create("rng");
  ADD_TCASE(s, "range", test_rng_range);
  ADD_TCASE(s, "distinct", test_rng_distinct);
  ADD_TCASE(s, "known_value", test_rng_known_value);
  ADD_TCASE(s, "create", test_rng_create);
  return s;
}

CHECK_MAIN(rng_suite)
