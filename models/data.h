#ifndef MODELS_DATA_H
#define MODELS_DATA_H
/* data.h - data sets: synthetic generators, LIBSVM and CSV loaders, a
 * deterministic train/test split, contiguous shards and minibatch draws. */

#include <stddef.h>
#include <stdio.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

typedef struct data_teacher data_teacher;

/* Examples are the rows of X; y[i] is a class index 0..n_classes-1, or a real target
 * when n_classes == 0 (regression). With `stream` set (data_set_stream), minibatch draws
 * take fresh examples from that teacher instead of rows. Fields are read-only for
 * callers. */
typedef struct dataset {
  gsl_matrix *X;
  double *y;
  size_t n_classes;
  const data_teacher *stream; /* not owned; NULL: draws come from the rows */
} dataset;

void data_free(dataset *d);
size_t data_n(const dataset *d);
size_t data_dim(const dataset *d);

/* A random teacher network dim -> hidden (tanh) -> n_classes whose weights are drawn from r
 * (as data_synthetic_teacher draws them), or with hidden == 0 a linear one (logits = W x):
 * its examples have x ~ N(0, 1) and the class of the teacher's largest logit, except that
 * with probability `noise` the label is replaced by a class drawn uniformly (noise > 0
 * needs classes); n_classes == 0: the teacher's single output plus N(0, 0.1^2) noise.
 * NULL on dim == 0, n_classes == 1 or a noise outside [0, 1]. Free with data_teacher_free
 * (NULL is a no-op). */
data_teacher *data_teacher_create(size_t dim, size_t hidden, size_t n_classes, double noise, gsl_rng *r);
/* A power-law input spectrum: the teacher labels x ~ N(0, 1) as before, and the example
 * then carries x_i (i + 1)^(-a/2), so input i's variance is (i + 1)^(-a). The labels do
 * not change; a learner sees small directions that plain SGD learns slowly (its step in
 * direction i scales with that variance) and per-coordinate rates do not. a == 0: none.
 * 0, or -1 on a negative or non-finite a. */
int data_teacher_set_decay(data_teacher *t, double a);
void data_teacher_free(data_teacher *t);
/* The teacher's own label of an example x (dimension dim, as drawn: decayed if
 * data_teacher_set_decay): the class of its largest logit, or its output for regression,
 * before any noise. */
double data_teacher_label(const data_teacher *t, const gsl_vector *x);
/* n fresh examples of t drawn with r into the first n rows of X and y. */
void data_teacher_fill(const data_teacher *t, gsl_rng *r, size_t n, gsl_matrix *X, double *y);
/* n examples of t drawn with r as a data set; NULL if n == 0. */
dataset *data_teacher_sample(const data_teacher *t, size_t n, gsl_rng *r);
/* From now on minibatch draws from d (data_sample_batch) are fresh examples of t, drawn
 * with the caller's stream: a stream without reuse, whatever the rows of d (t NULL: the
 * rows again). t must fit d (dimension, classes) and outlive its use. */
void data_set_stream(dataset *d, const data_teacher *t);

/* n examples of dimension dim, x ~ N(0, 1). Labels come from a random teacher network
 * dim -> hidden (tanh) -> n_classes (hidden 0: linear) whose weights are drawn from r first: class =
 * argmax of the teacher's logits; with n_classes == 0 the target is the teacher's single
 * output plus N(0, 0.1^2) noise. Returns NULL on n or dim 0 or n_classes == 1. */
dataset *data_synthetic_teacher(size_t n, size_t dim, size_t hidden, size_t n_classes, gsl_rng *r);

/* n examples: class c ~ uniform, x ~ N(mu_c, 1) with class means mu_c ~ N(0, sep^2 I)
 * drawn from r first. n_classes == 0: y = <v, x> + N(0, 0.1^2) with v ~ N(0, I/dim). */
dataset *data_synthetic_gaussian(size_t n, size_t dim, size_t n_classes, double sep, gsl_rng *r);

/* A synthetic language for next-token prediction: an order-2 Markov chain over `vocab`
 * tokens drawn from r. Each context (a, b) of two tokens has DATA_TOKENS_SUCCESSORS distinct
 * successors, taken with probabilities 8/15, 4/15, 2/15 and 1/15: the first depends on b alone
 * (a bigram a model learns first), the others on both; hashes of a salt drawn from r first and
 * of b, or of (a, b), pick them. Then n sequences of len tokens: the first two uniform, each
 * next one drawn from its context's successors. Row i of X is sequence i (token ids as exact
 * doubles), y is 0, n_classes is vocab. NULL if n is 0, len < 2 or vocab < 4. */
#define DATA_TOKENS_SUCCESSORS 4
dataset *data_synthetic_tokens(size_t n, size_t len, size_t vocab, gsl_rng *r);
/* The mean cross-entropy, in nats, of a predictor that knows the chain, over positions
 * 1..len-1 of such a sequence: ln(vocab) for the second token (independent of the first),
 * the successors' entropy H = 1.1369 nats for each later one: (ln vocab + (len-2) H)/(len-1).
 * The loss floor of any model. */
double data_tokens_loss_floor(size_t len, size_t vocab);

/* Loads a LIBSVM file ("label idx:val idx:val ...", 1-based increasing indices, '#'
 * comments). Dimension = largest index seen. Labels: if every label is an integer and
 * there are at most 1000 distinct ones they are mapped, in increasing order, onto class
 * indices 0..k-1 (so {-1,+1} becomes {0,1}); otherwise the data set is a regression one.
 * A data set holds at most 2^27 values (examples x dimension: the matrix is dense). A
 * NUL byte is an error and only "\n" or "\r\n" ends a line, so no line is cut silently.
 * On error returns NULL and writes "PATH:LINE: problem" (or "PATH: problem") into err. */
dataset *data_load_libsvm(const char *path, char *err, size_t errlen);

/* Loads a CSV file of numbers, label in the last column; a first line that does not
 * parse as numbers is a header and skipped. Same label rule and error contract. */
dataset *data_load_csv(const char *path, char *err, size_t errlen);

/* The same two loaders reading an open stream (a file, or fmemopen'd bytes) to its end;
 * `name` stands for the path in messages. The caller keeps and closes f. */
dataset *data_load_libsvm_stream(FILE *f, const char *name, char *err, size_t errlen);
dataset *data_load_csv_stream(FILE *f, const char *name, char *err, size_t errlen);

/* Shuffles the rows with r and puts round(test_fraction * n) of them in *test, the
 * rest in *train (both fresh copies). Returns 0, or -1 if either part would be empty. */
int data_split(const dataset *d, double test_fraction, gsl_rng *r, dataset **train, dataset **test);

/* Rows [begin, end) as a fresh copy. Returns NULL if the range is empty or out of bounds. */
dataset *data_slice(const dataset *d, size_t begin, size_t end);

/* Bounds of shard k of n contiguous shards: rows [*begin, *end). */
void data_shard_bounds(size_t n_rows, size_t n_shards, size_t k, size_t *begin, size_t *end);

/* Draws batch rows uniformly with replacement from rows [begin, end) using r, copies
 * them into the first `batch` rows of Xb and yb; or, when d has a stream, draws batch
 * fresh examples of it with r. Xb must have >= batch rows. */
void data_sample_batch(const dataset *d, size_t begin, size_t end, gsl_rng *r, size_t batch,
                       gsl_matrix *Xb, double *yb);

#endif
