/* collectives_ref.c - what the collectives of collectives.c must give and take: the
 * serial reference of each result, in the order each algorithm's schedule adds it
 * (against which the tests and collective.c check every member bit for bit), the
 * alpha-beta formulas of Thakur, Rabenseifner and Gropp 2005, the blocks and the names
 * (collectives_ref.h). */
#include "algorithms/collectives_ref.h"

#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

void coll_block(size_t n, size_t p, size_t b, size_t *off, size_t *len)
{
  size_t base = n / p, extra = n % p;
  *off = b * base + (b < extra ? b : extra);
  *len = base + (b < extra);
}

size_t coll_pow2_floor(size_t p)
{
  size_t q = 1;
  while (2 * q <= p)
    q *= 2;
  return q;
}

/* ---- serial references ------------------------------------------------------------ */

/* Pairwise tree over v[0..m-1] in order, in place: v[0] ends with the sum (distance 1
 * first, as recursive halving and a binomial tree from rank 0 group them). */
static double binomial_sum(double *v, size_t m)
{
  for (size_t d = 1; d < m; d *= 2)
    for (size_t j = 0; j + d < m; j += 2 * d)
      v[j] = v[j] + v[j + d];
  return v[0];
}

double coll_reference_at(coll_op op, coll_algo algo, size_t p, size_t root, size_t b, size_t i,
                         const double *const *x, double *v)
{
  if (op == COLL_ALLGATHER)
    return x[b][i];
  if (op == COLL_BCAST)
    return x[root][i];
  if (op == COLL_REDUCE_SCATTER || (op == COLL_ALLREDUCE && algo == COLL_RING)) {
    double s = x[(b + 1) % p][i];
    for (size_t k = 2; k <= p; k++)
      s = s + x[(b + k) % p][i];
    return s;
  }
  if (op == COLL_ALLREDUCE && algo == COLL_HALVING_DOUBLING) {
    size_t q = coll_pow2_floor(p), r = p - q;
    for (size_t j = 0; j < q; j++)
      v[j] = j < r ? x[2 * j][i] + x[2 * j + 1][i] : x[j + r][i];
    return binomial_sum(v, q);
  }
  size_t rt = op == COLL_REDUCE ? root : 0; /* reduce, or tree allreduce: reduce to 0 */
  for (size_t j = 0; j < p; j++)
    v[j] = x[(j + rt) % p][i];
  return binomial_sum(v, p);
}

void coll_reference(coll_op op, coll_algo algo, size_t p, size_t root, size_t me, size_t n, const double *const *x,
                    double *out)
{
  if ((op == COLL_REDUCE && me != root) || p == 0)
    return;
  double *v = xbt_malloc(p * sizeof(double));
  for (size_t b = 0; b < p; b++) {
    size_t off, len;
    coll_block(n, p, b, &off, &len);
    if (op == COLL_REDUCE_SCATTER && b != me)
      continue;
    for (size_t i = off; i < off + len; i++)
      out[i] = coll_reference_at(op, algo, p, root, b, i, x, v);
  }
  xbt_free(v);
}

/* ---- formulas -------------------------------------------------------------------- */

static double lg_ceil(size_t p)
{
  double k = 0;
  for (size_t q = 1; q < p; q *= 2)
    k++;
  return k;
}

double coll_formula(coll_op op, coll_algo algo, size_t p, double n, double alpha, double beta, double gamma)
{
  double P = (double)p, L = lg_ceil(p), f = (P - 1) / P;
  if (p == 1)
    return 0;
  switch (op) {
  case COLL_ALLREDUCE:
    if (algo == COLL_RING) /* 2(p-1) steps of n/p */
      return 2 * (P - 1) * alpha + 2 * f * n * beta + f * n * gamma;
    if (algo == COLL_HALVING_DOUBLING) {
      double q = (double)coll_pow2_floor(p), lq = lg_ceil(coll_pow2_floor(p)), fq = (q - 1) / q;
      double t = 2 * lq * alpha + 2 * fq * n * beta + fq * n * gamma;
      return q == P ? t : t + 2 * (alpha + n * beta) + n * gamma; /* pair up, hand back */
    }
    return 2 * L * (alpha + n * beta) + L * n * gamma; /* reduce + broadcast */
  case COLL_REDUCE_SCATTER:
    return (P - 1) * (alpha + n / P * beta + n / P * gamma);
  case COLL_ALLGATHER:
    return (P - 1) * (alpha + n / P * beta);
  case COLL_BCAST:
    return L * (alpha + n * beta);
  case COLL_REDUCE:
    return L * (alpha + n * beta + n * gamma);
  }
  xbt_die("unknown collective %d", (int)op);
}

double coll_busbw_factor(coll_op op, size_t p)
{
  double P = (double)p;
  switch (op) {
  case COLL_ALLREDUCE: return 2 * (P - 1) / P;
  case COLL_REDUCE_SCATTER:
  case COLL_ALLGATHER: return (P - 1) / P;
  case COLL_BCAST:
  case COLL_REDUCE: return 1;
  }
  xbt_die("unknown collective %d", (int)op);
}

/* ---- names ----------------------------------------------------------------------- */

static const char *const op_names[] = {"allreduce", "reduce-scatter", "allgather", "broadcast", "reduce"};
static const char *const algo_names[] = {"ring", "halving-doubling", "tree"};
static const char *const mode_names[] = {"messages", "rounds"};

int coll_op_parse(const char *s, coll_op *op)
{
  for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
    if (strcmp(s, op_names[i]) == 0) {
      *op = (coll_op)i;
      return 0;
    }
  return -1;
}

const char *coll_op_name(coll_op op)
{
  xbt_assert((size_t)op < sizeof(op_names) / sizeof(op_names[0]), "unknown collective %d", (int)op);
  return op_names[op];
}

int coll_algo_parse(const char *s, coll_algo *algo)
{
  for (size_t i = 0; i < sizeof(algo_names) / sizeof(algo_names[0]); i++)
    if (strcmp(s, algo_names[i]) == 0) {
      *algo = (coll_algo)i;
      return 0;
    }
  return -1;
}

const char *coll_algo_name(coll_algo algo)
{
  xbt_assert((size_t)algo < sizeof(algo_names) / sizeof(algo_names[0]), "unknown algorithm %d", (int)algo);
  return algo_names[algo];
}

int coll_mode_parse(const char *s, coll_mode *mode)
{
  for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
    if (strcmp(s, mode_names[i]) == 0) {
      *mode = (coll_mode)i;
      return 0;
    }
  return -1;
}

const char *coll_mode_name(coll_mode mode)
{
  xbt_assert((size_t)mode < sizeof(mode_names) / sizeof(mode_names[0]), "unknown mode %d", (int)mode);
  return mode_names[mode];
}
