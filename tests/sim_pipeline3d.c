/* sim_pipeline3d.c - Check suite for 3D parallelism (run.algorithm = pipeline with
 * pipeline.model = transformer, algorithms/pipeline.c's transformer kernel over
 * tensor.c's stages), through the CLI, one simulation per process: one stage equals the
 * tensor algorithm, the bubble of t = d = 1 against (m+p-1)(t_f+t_b), the exact
 * stage-boundary bytes with and without PTD-P's scatter/gather, Megatron's host order of
 * the tensor and data-parallel groups, the exact data-parallel allreduce bytes and those of
 * ZeRO-3 (ideal, per tensor, as DeepSpeed 0.3 ran it) and ZeRO-1 (pipeline.zero), mirrored replicas against simulated ones, determinism
 * and bad input. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/msg.h"
#include "check_util.h"
#include "cli_util.h"

#define H MSG_HEADER_BYTES /* every message's header (msg.h) */
#define FP16 2.0           /* model.dtype = fp16: bytes per element on the wire */

/* Tolerances, each with where it comes from. */
/* TOL_SAME_REL: one stage and the tensor algorithm report the same flops over the same
 * time, a division or two apart (measured: equal). */
#define TOL_SAME_REL 1e-12
/* TOL_TF_REL: a stage's forward time is its flops at 1 Gflop/s, plus its share of the
 * next to free messages (measured <= 2.3e-10). */
#define TOL_TF_REL 1e-6
/* TOL_BUBBLE_REL, TOL_BUBBLE_INTERLEAVED_REL: makespan and bubble against the schedule's
 * formula (GPipe sec. 2.3; PTD-P sec. 2.2.2 for v chunks), which leaves out the messages
 * and the update: measured <= 1.3e-9; 1% asked, 2% with v = 2 (v times the messages). */
#define TOL_BUBBLE_REL 0.01
#define TOL_BUBBLE_INTERLEAVED_REL 0.02
/* TOL_MIRROR_REL: mirrored replicas against simulated ones: the same activities of replica 0
 * on links no other replica uses, so SimGrid gives them the same rates (measured: equal, the
 * 1T row of PTD-P included); 1e-12 allows a solver's rounding on the larger system. */
#define TOL_MIRROR_REL 1e-12

static double rel(double a, double b)
{
  return fabs(a - b) / fmax(fabs(b), 1e-300);
}

/* `dtsim run` of 3D parallelism on `platform` (a preset, or a file name in dir when it
 * ends in .xml), timing only, fp16, one step, with the extra sets; returns summary.json. */
static json_t *run3d(const char *dir, const char *out, const char *platform, const char *const *sets)
{
  char plat[160];
  int file = strstr(platform, ".xml") != NULL;
  snprintf(plat, sizeof plat, "platform.%s=%s", file ? "file" : "preset", platform);
  const char *args[96] = {"run", "--quiet", "--out", out, "--set", "run.algorithm=pipeline", "--set",
                          "pipeline.model=transformer", "--set", "model.numerics=off", "--set", "model.dtype=fp16",
                          "--set", "run.max_steps=1", "--set", file ? "platform.preset=" : "platform.file=",
                          "--set", plat};
  size_t n = 18;
  for (size_t i = 0; sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  args[n] = NULL;
  return cli_summary(dir, args, out);
}

static json_t *pp(json_t *j)
{
  return json_object_get(j, "pipeline");
}

static double pnum(json_t *j, const char *key)
{
  return json_number_value(json_object_get(pp(j), key));
}

static double stage_num(json_t *j, size_t s, const char *key)
{
  return json_number_value(json_object_get(json_array_get(json_object_get(pp(j), "per_stage"), s), key));
}

static double bytes_total(json_t *j)
{
  return json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
}

/* A star of n hosts host-0 .. host-(n-1): 1 Gflop/s, 1e15 B/s, no latency (communication
 * next to free), written to dir/fast.xml. */
static char *fast_dir(int n)
{
  char *dir = cli_tmpdir(), hosts[16];
  snprintf(hosts, sizeof hosts, "%d", n);
  const char *gen[] = {"platform", "--hosts", hosts, "--topology", "star", "--bw", "1e15", "--lat", "0", "-o",
                       "fast.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  return dir;
}

START_TEST(test_pipeline3d_one_stage_equals_tensor)
{
  /* p = 1: one chunk holds every layer, the embedding and the logits; its microbatches
   * run forward then backward as tensor.c's ranks do, and the flush's data-parallel
   * allreduce is tensor.c's (tensor_stage_dp_elements of the whole model equals
   * tensor_dp_elements; the optimizer is free in both). The same collectives in the same
   * order on the same hosts: the same simulated time and bytes, exactly. Two shapes: with
   * recomputation, a vocabulary and d = 2; with sequence parallelism, no vocabulary. */
  static const char *shapes[][6] = {
      {"tensor.recompute=on", "tensor.vocab=512", "tensor.data_parallel=2", "tensor.sequence_parallel=off",
       "tensor.async_grad_allreduce=on", NULL},
      {"tensor.recompute=off", "tensor.vocab=0", "tensor.data_parallel=1", "tensor.sequence_parallel=on",
       "tensor.async_grad_allreduce=off", NULL},
  };
  char *dir = cli_tmpdir();
  for (size_t k = 0; k < 2; k++) {
    const char *common[] = {"tensor.ranks=2", "tensor.hidden=256", "tensor.heads=8", "tensor.layers=4",
                            "tensor.seq=128", "tensor.microbatch=2"};
    const char *sets[32];
    size_t n = 0;
    for (size_t i = 0; i < 6; i++)
      sets[n++] = common[i];
    for (size_t i = 0; shapes[k][i]; i++)
      sets[n++] = shapes[k][i];
    sets[n++] = "pipeline.stages=1";
    sets[n++] = "pipeline.microbatches=3";
    sets[n] = NULL;
    json_t *a = run3d(dir, "pp", "selene", sets);
    sets[n - 2] = "run.algorithm=tensor";
    sets[n - 1] = "tensor.microbatches=3";
    sets[n++] = "tensor.steps=1";
    sets[n] = NULL;
    json_t *b = run3d(dir, "tp", "selene", sets);
    json_t *tb = json_object_get(b, "tensor");
    double t_tensor = json_number_value(json_object_get(tb, "step_time_s"));
    ck_assert_msg(pnum(a, "makespan_s") == t_tensor, "case %zu: pipeline %.17g s, tensor %.17g s", k,
                  pnum(a, "makespan_s"), t_tensor);
    ck_assert_msg(bytes_total(a) == bytes_total(b), "case %zu: pipeline %.17g bytes, tensor %.17g", k, bytes_total(a),
                  bytes_total(b));
    ck_assert_msg(rel(pnum(a, "tflops_per_gpu"), json_number_value(json_object_get(tb, "tflops_per_gpu"))) <
                      TOL_SAME_REL,
                  "case %zu: Tflop/s per GPU differ", k);
    ck_assert(pnum(a, "makespan_s") > 0);
    json_decref(a);
    json_decref(b);
  }
  free(dir);
}
END_TEST

START_TEST(test_pipeline3d_bubble)
{
  /* t = d = 1, no vocabulary, on a 1 Gflop/s star with next to free communication: a
   * stage of 2 GPT layers (b = 1, s = 64, h = 128) takes t_f = 2 (24 b s h^2 + 4 b s^2 h)
   * flops forward and twice that backward (tensor.c: 48 b s h^2 + 8 b s^2 h), so a step is
   * (m+p-1)(t_f+t_b) within TOL_BUBBLE_REL (GPipe sec. 2.3) and the idle share
   * (p-1)/(m+p-1); interleaved with v = 2 chunks of one layer, the bubble time is 1/v of
   * that (PTD-P sec. 2.2.2), within TOL_BUBBLE_INTERLEAVED_REL. */
  static const struct {
    const char *sched;
    long p, m, v;
  } cases[] = {{"1f1b", 4, 8, 1}, {"gpipe", 2, 4, 1}, {"1f1b", 4, 16, 1}, {"interleaved", 2, 4, 2}};
  char *dir = fast_dir(8);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char sp[48], sm[48], ss[48], sv[48], sl[48];
    long p = cases[i].p, m = cases[i].m, v = cases[i].v;
    snprintf(sp, sizeof sp, "pipeline.stages=%ld", p);
    snprintf(sm, sizeof sm, "pipeline.microbatches=%ld", m);
    snprintf(ss, sizeof ss, "pipeline.schedule=%s", cases[i].sched);
    snprintf(sv, sizeof sv, "pipeline.chunks=%ld", v);
    snprintf(sl, sizeof sl, "tensor.layers=%ld", 2 * p);
    const char *sets[] = {"tensor.ranks=1", "tensor.data_parallel=1", "tensor.hidden=128", "tensor.heads=4", sl,
                          "tensor.seq=64", "tensor.microbatch=1", "tensor.vocab=0", "tensor.recompute=off",
                          "model.efficiency=1", "platform.cores=1", sp, sm, ss, sv, NULL};
    json_t *j = run3d(dir, "out", "fast.xml", sets);
    double b = 1, s = 64, h = 128;
    double tf = 2 * (24 * b * s * h * h + 4 * b * s * s * h) / 1e9, tb = 2 * tf;
    double want = (double)(m + p - 1) * (tf + tb) / (double)v + (double)m * (tf + tb) * (1 - 1.0 / (double)v);
    double formula = (double)(p - 1) / (double)(v * m + p - 1);
    ck_assert_msg(rel(pnum(j, "t_forward_s"), tf) < TOL_TF_REL, "t_f %.17g want %.17g", pnum(j, "t_forward_s"), tf);
    ck_assert_msg(rel(pnum(j, "makespan_s"), want) < (v > 1 ? TOL_BUBBLE_INTERLEAVED_REL : TOL_BUBBLE_REL),
                  "%s p %ld m %ld: makespan %.9g want %.9g", cases[i].sched, p, m, pnum(j, "makespan_s"), want);
    ck_assert_msg(rel(pnum(j, "bubble_fraction"), formula) < (v > 1 ? TOL_BUBBLE_INTERLEAVED_REL : TOL_BUBBLE_REL),
                  "%s p %ld m %ld: bubble %.9g formula %.9g", cases[i].sched, p, m, pnum(j, "bubble_fraction"),
                  formula);
    json_decref(j);
  }
  free(dir);
}
END_TEST

START_TEST(test_pipeline3d_p2p_bytes)
{
  /* p = 2, t = 4, d = 1, m = 3, b = 2, s = 64, h = 128. Every microbatch crosses the one
   * boundary forward and back. Scatter/gather on (PTD-P sec. 4.1): each of the t ranks
   * sends b s h / t elements, so p2p = 2 m t (b s h / t x 2 + H) bytes; off: every rank
   * sends the whole b s h, 2 m t (b s h x 2 + H). Each received slice set is allgathered
   * in the receiving group: a ring allgather of b s h elements over t ranks sends t - 1
   * rounds of t blocks, (t - 1)(b s h x 2 + t H) bytes, once per microbatch and
   * direction; nothing else changes, so bytes_total(on) - bytes_total(off) is exactly
   * 2 m (t - 1)(b s h x 2 + t H) - (p2p(off) - p2p(on)). Stage 0 sends only activations,
   * m t-th slices of replica 0 rank 0: m (b s h / t x 2 + H). */
  char *dir = cli_tmpdir();
  const double m = 3, t = 4, bsh = 2.0 * 64 * 128;
  const char *on[] = {"tensor.ranks=4", "tensor.hidden=128", "tensor.heads=4", "tensor.layers=2", "tensor.seq=64",
                      "tensor.microbatch=2", "tensor.vocab=0", "pipeline.stages=2", "pipeline.microbatches=3",
                      "pipeline.scatter_gather=on", NULL};
  json_t *a = run3d(dir, "on", "selene", on);
  const char *off[] = {"tensor.ranks=4", "tensor.hidden=128", "tensor.heads=4", "tensor.layers=2", "tensor.seq=64",
                       "tensor.microbatch=2", "tensor.vocab=0", "pipeline.stages=2", "pipeline.microbatches=3",
                       "pipeline.scatter_gather=off", NULL};
  json_t *b = run3d(dir, "off", "selene", off);
  double p2p_on = 2 * m * t * (bsh / t * FP16 + H), p2p_off = 2 * m * t * (bsh * FP16 + H);
  ck_assert_msg(pnum(a, "p2p_bytes") == p2p_on, "p2p on %.17g want %.17g", pnum(a, "p2p_bytes"), p2p_on);
  ck_assert_msg(pnum(b, "p2p_bytes") == p2p_off, "p2p off %.17g want %.17g", pnum(b, "p2p_bytes"), p2p_off);
  ck_assert(stage_num(a, 0, "bytes_sent") == m * (bsh / t * FP16 + H));
  ck_assert(stage_num(b, 1, "bytes_sent") == m * (bsh * FP16 + H));
  double gathers = 2 * m * (t - 1) * (bsh * FP16 + t * H);
  ck_assert_msg(bytes_total(a) - bytes_total(b) == gathers - (p2p_off - p2p_on), "total on %.17g off %.17g",
                bytes_total(a), bytes_total(b));
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

static const char *host_at(json_t *groups, size_t g, size_t i)
{
  return json_string_value(json_array_get(json_array_get(groups, g), i));
}

START_TEST(test_pipeline3d_host_mapping)
{
  /* Megatron-LM's order: device (stage s, replica j, tensor rank r) on host
   * (s d + j) t + r, so a tensor group is t consecutive hosts and the data-parallel group
   * of (s, r) the hosts r, r + t, ... of stage s's d t. p = 3, t = 2, d = 2 on a star of
   * 12 hosts. On selene (host i = GPU i mod 8 of node i / 8), t = 8 puts each tensor
   * group on one node: group g on gpu-8g .. gpu-8g+7. */
  char *dir = fast_dir(12);
  const char *sets[] = {"tensor.ranks=2", "tensor.data_parallel=2", "tensor.hidden=64", "tensor.heads=2",
                        "tensor.layers=3", "tensor.seq=16", "tensor.microbatch=1", "pipeline.stages=3",
                        "pipeline.microbatches=3", NULL};
  json_t *j = run3d(dir, "out", "fast.xml", sets);
  json_t *tg = json_object_get(pp(j), "tensor_groups"), *dg = json_object_get(pp(j), "dp_groups");
  ck_assert_int_eq(json_array_size(tg), 6);
  ck_assert_int_eq(json_array_size(dg), 6);
  for (size_t s = 0; s < 3; s++)
    for (size_t jj = 0; jj < 2; jj++)
      for (size_t r = 0; r < 2; r++) {
        char want[32];
        snprintf(want, sizeof want, "host-%zu", (s * 2 + jj) * 2 + r);
        ck_assert_str_eq(host_at(tg, s * 2 + jj, r), want);
        ck_assert_str_eq(host_at(dg, s * 2 + r, jj), want);
      }
  ck_assert_int_eq((long)pnum(j, "gpus"), 12);
  json_decref(j);
  const char *sel[] = {"tensor.ranks=8", "tensor.data_parallel=2", "tensor.hidden=64", "tensor.heads=8",
                       "tensor.layers=2", "tensor.seq=16", "tensor.microbatch=1", "pipeline.stages=2",
                       "pipeline.microbatches=2", NULL};
  j = run3d(dir, "sel", "selene", sel);
  tg = json_object_get(pp(j), "tensor_groups");
  ck_assert_int_eq(json_array_size(tg), 4);
  for (size_t g = 0; g < 4; g++)
    for (size_t r = 0; r < 8; r++) {
      char want[32];
      snprintf(want, sizeof want, "gpu-%zu", 8 * g + r);
      ck_assert_str_eq(host_at(tg, g, r), want);
    }
  json_decref(j);
  free(dir);
}
END_TEST

/* Gradient elements of a rank of a stage of `layers` GPT layers: Megatron's layer holds
 * 12h^2 + 13h parameters, of which QKV (3h^2 + 3h), Wo (h^2), W1 (4h^2 + 4h) and W2 (4h^2)
 * are split over t and bo, b2 and the two LayerNorms (6h) replicated; the first stage adds
 * its V/t rows of the tied embedding and the s x h position embedding, the last the V/t
 * rows and the final LayerNorm (2h). */
static double stage_elements(double layers, double h, double t, double V, double s, int first, int last)
{
  return layers * ((12 * h * h + 7 * h) / t + 6 * h) + (first ? V * h / t + s * h : 0) + (last ? V * h / t + 2 * h : 0);
}

START_TEST(test_pipeline3d_dp_bytes)
{
  /* p = 2, t = 2, h = 64, 3 layers (2 on stage 0, 1 on stage 1), V = 256, s = 16. Going
   * from d = 1 to d = 2 doubles every tensor collective, boundary message and embedding
   * allreduce, and adds one ring allreduce of n_s elements per (stage, tensor rank) over
   * 2 replicas: 2 (d - 1) rounds of d blocks, 2 (d - 1)(n_s x 2 + d H) bytes. So
   * bytes_total(d = 2) - 2 bytes_total(d = 1) = sum over s, r of 2 (n_s x 2 + 2 H). */
  char *dir = cli_tmpdir();
  const char *d1[] = {"tensor.ranks=2", "tensor.data_parallel=1", "tensor.hidden=64", "tensor.heads=4",
                      "tensor.layers=3", "tensor.seq=16", "tensor.microbatch=1", "tensor.vocab=256",
                      "tensor.recompute=on", "pipeline.stages=2", "pipeline.microbatches=2", NULL};
  json_t *a = run3d(dir, "d1", "selene", d1);
  const char *d2[] = {"tensor.ranks=2", "tensor.data_parallel=2", "tensor.hidden=64", "tensor.heads=4",
                      "tensor.layers=3", "tensor.seq=16", "tensor.microbatch=1", "tensor.vocab=256",
                      "tensor.recompute=on", "pipeline.stages=2", "pipeline.microbatches=2", NULL};
  json_t *b = run3d(dir, "d2", "selene", d2);
  double n0 = stage_elements(2, 64, 2, 256, 16, 1, 0), n1 = stage_elements(1, 64, 2, 256, 16, 0, 1);
  ck_assert_msg(stage_num(b, 0, "params") == n0, "stage 0: %.17g elements, want %.17g", stage_num(b, 0, "params"), n0);
  ck_assert_msg(stage_num(b, 1, "params") == n1, "stage 1: %.17g elements, want %.17g", stage_num(b, 1, "params"), n1);
  double dp = 2 * (2 * (n0 * FP16 + 2 * H)) + 2 * (2 * (n1 * FP16 + 2 * H)); /* 2 tensor ranks per stage */
  ck_assert_msg(bytes_total(b) - 2 * bytes_total(a) == dp, "data-parallel bytes %.17g, want %.17g",
                bytes_total(b) - 2 * bytes_total(a), dp);
  ck_assert(stage_num(b, 0, "update_s") > stage_num(a, 0, "update_s"));
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* pipeline.zero = 3 on the set-up of test_pipeline3d_dp_bytes (d = 2, m = 2): per microbatch
 * each (stage, tensor rank) allgathers every layer twice (forward, backward) and its other
 * entries (embedding rows, position embedding, final LayerNorm) twice, and reduce-scatters each
 * once; no flush allreduce. A ring allgather or reduce-scatter of e elements over 2 members
 * sends e x 2 + 2 H bytes. So bytes_total(zero 3, d = 2) - 2 bytes_total(d = 1) = sum over s, r
 * of m x 3 x (n_s x 2 + U_s x 2 H), U_s the stage's units (its layers, and one for the other
 * entries: stage 0 has 2 layers and the embedding, stage 1 one layer and the final
 * LayerNorm and logits' rows). summary.json counts device 0's elements. With the gathers the
 * step is longer than without (comm that overlaps only in part), and Adam's state, the
 * gradients and parameters are held 1/d each. */
START_TEST(test_pipeline3d_zero3_bytes)
{
  char *dir = cli_tmpdir();
  const char *common[] = {"tensor.ranks=2", "tensor.hidden=64", "tensor.heads=4", "tensor.layers=3",
                          "tensor.seq=16", "tensor.microbatch=1", "tensor.vocab=256", "tensor.recompute=on",
                          "pipeline.stages=2", "pipeline.microbatches=2", "pipeline.optimizer=adam", NULL};
  const char *sets[3][16];
  const char *extra[3][2] = {{"tensor.data_parallel=1", "pipeline.zero=0"},
                             {"tensor.data_parallel=2", "pipeline.zero=3"},
                             {"tensor.data_parallel=2", "pipeline.zero=0"}};
  json_t *r[3];
  for (int k = 0; k < 3; k++) {
    size_t n = 0;
    for (; common[n]; n++)
      sets[k][n] = common[n];
    sets[k][n++] = extra[k][0];
    sets[k][n++] = extra[k][1];
    sets[k][n] = NULL;
    char out[8];
    snprintf(out, sizeof out, "z%d", k);
    r[k] = run3d(dir, out, "selene", sets[k]);
  }
  double n0 = stage_elements(2, 64, 2, 256, 16, 1, 0), n1 = stage_elements(1, 64, 2, 256, 16, 0, 1);
  double m = 2, zero = 2 * (m * 3 * (n0 * FP16 + 3 * 2 * H)) + 2 * (m * 3 * (n1 * FP16 + 2 * 2 * H));
  ck_assert_msg(bytes_total(r[1]) - 2 * bytes_total(r[0]) == zero, "ZeRO-3 bytes %.17g, want %.17g",
                bytes_total(r[1]) - 2 * bytes_total(r[0]), zero);
  json_t *z = json_object_get(pp(r[1]), "zero");
  ck_assert_ptr_nonnull(z);
  ck_assert(json_object_get(pp(r[2]), "zero") == NULL);
  ck_assert_msg(json_number_value(json_object_get(z, "gathered_elements")) == 2 * m * n0, "gathered %.17g",
                json_number_value(json_object_get(z, "gathered_elements")));
  ck_assert(json_number_value(json_object_get(z, "reduce_scattered_elements")) == m * n0);
  json_t *mem0 = json_object_get(pp(r[2]), "memory_per_gpu"), *mem3 = json_object_get(pp(r[1]), "memory_per_gpu");
  double opt0 = json_number_value(json_object_get(mem0, "optimizer_bytes"));
  double opt3 = json_number_value(json_object_get(mem3, "optimizer_bytes"));
  ck_assert_msg(opt3 == opt0 / 2, "Adam's state %.17g, want half of %.17g", opt3, opt0);
  ck_assert(pnum(r[1], "makespan_s") > pnum(r[0], "makespan_s"));
  for (int k = 0; k < 3; k++)
    json_decref(r[k]);
  free(dir);
}
END_TEST

/* zero3's set-up runs with `extra` (NULL-ended) added: summary.json. */
static json_t *run_zero3(const char *dir, const char *out, const char *const *extra)
{
  const char *sets[32] = {"tensor.ranks=2", "tensor.hidden=64", "tensor.heads=4", "tensor.layers=3",
                          "tensor.seq=16", "tensor.microbatch=1", "tensor.vocab=256", "tensor.recompute=on",
                          "pipeline.stages=2", "pipeline.microbatches=2", "pipeline.optimizer=adam",
                          "tensor.data_parallel=2", "pipeline.zero=3"};
  size_t n = 13;
  for (size_t k = 0; extra[k]; k++)
    sets[n++] = extra[k];
  sets[n] = NULL;
  return run3d(dir, out, "selene", sets);
}

static double zero_num(json_t *j, const char *key)
{
  return json_number_value(json_object_get(json_object_get(pp(j), "zero"), key));
}

/* pipeline.zero_gather = tensor with no tensor persistent (zero_persistence = 0) on the set-up of
 * test_pipeline3d_zero3_bytes: the same elements as one collective per layer, one collective per
 * tensor instead (a layer's 12; stage 0's other entries 2, the word and position embeddings;
 * stage 1's 3, the word embedding and the final LayerNorm's two), every size even (no padding
 * to d = 2). Each collective over 2 members is one 64-byte header per member more: per
 * microbatch stage 0 (2 layers) adds 2 x 3 x 11 + 3 x 1 collectives and stage 1 (1 layer)
 * 3 x 11 + 3 x 2, on each of t d = 4 devices. */
START_TEST(test_pipeline3d_zero3_tensors)
{
  char *dir = cli_tmpdir();
  const char *layer[] = {NULL}, *tensor[] = {"pipeline.zero_gather=tensor", "pipeline.zero_persistence=0", NULL};
  json_t *a = run_zero3(dir, "l", layer), *b = run_zero3(dir, "t", tensor);
  ck_assert(zero_num(a, "gathered_elements") == zero_num(b, "gathered_elements"));
  ck_assert(zero_num(a, "reduce_scattered_elements") == zero_num(b, "reduce_scattered_elements"));
  double m = 2, extra = 4 * m * H * ((2 * 3 * 11 + 3) + (3 * 11 + 3 * 2));
  ck_assert_msg(bytes_total(b) - bytes_total(a) == extra, "per tensor: %.17g more bytes, want %.17g",
                bytes_total(b) - bytes_total(a), extra);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* DeepSpeed 0.3's runtime on that set-up (as rounds): without prefetch each layer is gathered
 * again for its backward after its recomputation, so device 0 (stage 0: 2 layers of L =
 * (12h^2 + 7h)/t + 6h elements) gathers m x 2 x L more than with it; its gradients are each
 * reduced once, reduce-scattered or allreduced in buckets. The host work and NCCL's latencies
 * only add time. */
START_TEST(test_pipeline3d_zero3_deepspeed)
{
  char *dir = cli_tmpdir();
  const char *ideal[] = {"pipeline.zero_gather=tensor", "pipeline.zero_persistence=0", "run.collectives=rounds", NULL};
  const char *noprefetch[] = {"pipeline.zero_gather=tensor", "pipeline.zero_persistence=0", "run.collectives=rounds",
                              "pipeline.zero_prefetch=off", NULL};
  const char *ds[] = {"pipeline.zero_gather=tensor", "pipeline.zero_persistence=0", "run.collectives=rounds",
                      "pipeline.zero_prefetch=off", "pipeline.zero_host=on", "pipeline.zero_latency=nccl",
                      "pipeline.zero_reduce=allreduce", NULL};
  json_t *a = run_zero3(dir, "a", ideal), *b = run_zero3(dir, "b", noprefetch), *c = run_zero3(dir, "c", ds);
  double L = (12 * 64.0 * 64 + 7 * 64) / 2 + 6 * 64, m = 2;
  ck_assert_msg(zero_num(b, "gathered_elements") - zero_num(a, "gathered_elements") == m * 2 * L,
                "gathered %.17g more, want %.17g", zero_num(b, "gathered_elements") - zero_num(a, "gathered_elements"),
                m * 2 * L);
  ck_assert(zero_num(c, "gathered_elements") == zero_num(b, "gathered_elements"));
  ck_assert(zero_num(c, "reduce_scattered_elements") == zero_num(a, "reduce_scattered_elements"));
  ck_assert(pnum(b, "makespan_s") > pnum(a, "makespan_s"));
  ck_assert(pnum(c, "makespan_s") > pnum(b, "makespan_s"));
  json_decref(a);
  json_decref(b);
  json_decref(c);
  free(dir);
}
END_TEST

/* pipeline.zero = 1 on the set-up of test_pipeline3d_dp_bytes: the flush's ring allreduce of
 * n_s elements per (stage, tensor rank) becomes a ring reduce-scatter and a ring allgather of
 * them, each d - 1 steps of one block and a header per member, half of the allreduce's
 * 2 (d - 1) (ZeRO sec. 7: 2 psi per replica for P_os, as for DDP). So the bytes of zero = 0 and
 * 1 are equal, and with d = 2 they exceed 2 bytes_total(d = 1) by test_pipeline3d_dp_bytes's
 * sum over s, r of 2 (n_s x 2 + 2 H); also at d = 3, where the blocks are uneven. summary.json
 * counts device 0's n_0 elements scattered and gathered per step; Adam's state is 1/d of
 * zero = 0's (ZeRO's K psi / N_d), the parameters and gradients stay whole. */
START_TEST(test_pipeline3d_zero1_bytes)
{
  char *dir = cli_tmpdir();
  const char *common[] = {"tensor.ranks=2", "tensor.hidden=64", "tensor.heads=4", "tensor.layers=3",
                          "tensor.seq=16", "tensor.microbatch=1", "tensor.vocab=256", "tensor.recompute=on",
                          "pipeline.stages=2", "pipeline.microbatches=2", "pipeline.optimizer=adam", NULL};
  const char *extra[5][2] = {{"tensor.data_parallel=1", "pipeline.zero=0"},
                             {"tensor.data_parallel=2", "pipeline.zero=0"},
                             {"tensor.data_parallel=2", "pipeline.zero=1"},
                             {"tensor.data_parallel=3", "pipeline.zero=0"},
                             {"tensor.data_parallel=3", "pipeline.zero=1"}};
  json_t *r[5];
  for (int k = 0; k < 5; k++) {
    const char *sets[16];
    size_t n = 0;
    for (; common[n]; n++)
      sets[n] = common[n];
    sets[n++] = extra[k][0];
    sets[n++] = extra[k][1];
    sets[n] = NULL;
    char out[8];
    snprintf(out, sizeof out, "z%d", k);
    r[k] = run3d(dir, out, "selene", sets);
  }
  double n0 = stage_elements(2, 64, 2, 256, 16, 1, 0), n1 = stage_elements(1, 64, 2, 256, 16, 0, 1);
  double dp = 2 * (2 * (n0 * FP16 + 2 * H)) + 2 * (2 * (n1 * FP16 + 2 * H));
  ck_assert_msg(bytes_total(r[2]) - 2 * bytes_total(r[0]) == dp, "ZeRO-1 data-parallel bytes %.17g, want %.17g",
                bytes_total(r[2]) - 2 * bytes_total(r[0]), dp);
  for (int k = 1; k < 5; k += 2) {
    const char *d = extra[k][0];
    ck_assert_msg(bytes_total(r[k + 1]) == bytes_total(r[k]), "%s: ZeRO-1 %.17g bytes, zero = 0 %.17g", d,
                  bytes_total(r[k + 1]), bytes_total(r[k]));
    json_t *z = json_object_get(pp(r[k + 1]), "zero");
    ck_assert_ptr_nonnull(z);
    ck_assert(json_object_get(pp(r[k]), "zero") == NULL);
    ck_assert_int_eq(json_integer_value(json_object_get(z, "stage")), 1);
    ck_assert(json_number_value(json_object_get(z, "reduce_scattered_elements")) == n0);
    ck_assert(json_number_value(json_object_get(z, "gathered_elements")) == n0);
    json_t *mem0 = json_object_get(pp(r[k]), "memory_per_gpu"), *mem1 = json_object_get(pp(r[k + 1]), "memory_per_gpu");
    double dd = k == 1 ? 2 : 3, opt0 = json_number_value(json_object_get(mem0, "optimizer_bytes"));
    double opt1 = json_number_value(json_object_get(mem1, "optimizer_bytes"));
    ck_assert_msg(opt1 == opt0 / dd, "%s: Adam's state %.17g, want 1/d of %.17g", d, opt1, opt0);
    ck_assert(opt0 > 0);
    const char *whole[] = {"parameters_bytes", "gradients_bytes", "stash_bytes"};
    for (size_t i = 0; i < 3; i++)
      ck_assert_msg(json_number_value(json_object_get(mem1, whole[i])) == json_number_value(json_object_get(mem0, whole[i])),
                    "%s: %s differs from zero = 0's", d, whole[i]);
    ck_assert(json_number_value(json_object_get(mem1, "total_bytes")) ==
              json_number_value(json_object_get(mem0, "total_bytes")) - opt0 + opt1);
  }
  for (int k = 0; k < 5; k++)
    json_decref(r[k]);
  free(dir);
}
END_TEST

START_TEST(test_pipeline3d_determinism)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=2", "tensor.data_parallel=2", "tensor.hidden=64", "tensor.heads=4",
                        "tensor.layers=4", "tensor.seq=16", "tensor.microbatch=1", "tensor.vocab=256",
                        "pipeline.stages=2", "pipeline.microbatches=4", "pipeline.schedule=interleaved",
                        "pipeline.chunks=2", NULL};
  json_decref(run3d(dir, "a", "selene", sets));
  json_decref(run3d(dir, "b", "selene", sets));
  char *x = cli_read(dir, "a/summary.json"), *y = cli_read(dir, "b/summary.json");
  ck_assert_str_eq(x, y);
  free(x);
  free(y);
  free(dir);
}
END_TEST

/* `dtsim run` in dir with the base arguments (a NULL-ended list) and each of `sets` (NULL-ended,
 * at most 4) as --set, refused with one line holding needle (exit 2, no result folder). */
static void refused3d(const char *dir, const char *const *base, const char *const *sets, const char *needle)
{
  const char *args[48];
  size_t n = 0;
  for (; base[n]; n++)
    args[n] = base[n];
  for (size_t k = 0; k < 4 && sets[k]; k++) {
    args[n++] = "--set";
    args[n++] = sets[k];
  }
  args[n] = NULL;
  cli_assert_bad_input(dir, args, needle);
}

START_TEST(test_pipeline3d_bad_input)
{
  char *dir = cli_tmpdir();
  struct {
    const char *set[4];
    const char *needle;
  } cases[] = {
      {{"tensor.ranks=3", NULL}, "tensor.ranks: 3 ranks must divide tensor.heads = 4"},
      {{"model.numerics=on", NULL}, "tensor.vocab: a numeric GPT needs a vocabulary of at least 4 tokens"},
      {{"pipeline.recompute=on", NULL}, "pipeline.recompute: transformer stages recompute as tensor.recompute says"},
      {{"pipeline.stages=3", NULL}, "tensor.layers: the transformer has 2 layers, fewer than the 3"},
      {{"pipeline.model=cnn", NULL}, "pipeline.model"},
      {{"pipeline.zero=2", NULL}, "pipeline.zero: 3D stages run ZeRO's stage 1 or 3, or none (0), not 2"},
      {{"pipeline.zero=1", "pipeline.model=dense", NULL},
       "pipeline.zero: ZeRO shards transformer stages (pipeline.model = transformer); dense stages run none"},
      {{"pipeline.zero=3", "model.numerics=on", "tensor.vocab=16", NULL},
       "pipeline.zero: ZeRO-3 shards transformer stages (pipeline.model = transformer) in timing-only runs"},
      {{"pipeline.zero=3", "pipeline.mirror_replicas=on", "tensor.data_parallel=2", NULL},
       "pipeline.mirror_replicas: with pipeline.zero = 3 the 2 replicas gather every layer together"},
      {{"pipeline.zero_gather=tensor", NULL}, "pipeline.zero_gather: has no effect without ZeRO-3 (pipeline.zero = 3)"},
      {{"pipeline.zero=3", "pipeline.zero_persistence=10", NULL},
       "pipeline.zero_persistence: has no effect with pipeline.zero_gather = layer"},
      {{"pipeline.zero=3", "pipeline.zero_latency=nccl", "run.collectives=messages", NULL},
       "pipeline.zero_latency: nccl replaces the latency of a round (run.collectives = rounds)"},
      {{"tensor.data_parallel=4", "pipeline.stages=2", NULL},
       "the platform has 8 hosts, the run needs 16 (pipeline.stages x tensor.ranks x tensor.data_parallel)"},
  };
  const char *gen[] = {"platform", "--hosts", "8", "--topology", "star", "-o", "eight.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  static const char *const base[] = {"run", "--out", "out", "--set", "run.algorithm=pipeline", "--set",
                                     "pipeline.model=transformer", "--set", "model.numerics=off", "--set",
                                     "platform.preset=", "--set", "platform.file=eight.xml", NULL};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    refused3d(dir, base, cases[i].set, cases[i].needle);
  free(dir);
}
END_TEST

/* pipeline.mirror_replicas: replicas 1..d-1 waiting for replica 0's flush give replica 0's
 * times, on selene with t = 8 (every GPU its own link, each replica's stage a node of its own
 * with its own InfiniBand link, so replicas share no link before the flush): d = 4 with 1F1B at
 * message level, d = 2 interleaved as rounds, d = 3 with fused layers and synchronous weight
 * gradients, d = 3 with ZeRO-1 (the flush's reduce-scatter and allgather); the makespan, the Tflop/s and every stage's busy, idle and update times agree,
 * and the boundary bytes count each mirror as its twin. */
START_TEST(test_pipeline3d_mirror)
{
  char *dir = cli_tmpdir();
  static const char *const variants[][8] = {
      {"tensor.ranks=8", "tensor.data_parallel=4", "pipeline.schedule=1f1b", "pipeline.microbatches=4", NULL},
      {"tensor.ranks=8", "tensor.data_parallel=2", "pipeline.schedule=interleaved", "pipeline.chunks=2",
       "pipeline.microbatches=4", "run.collectives=rounds", NULL},
      {"tensor.ranks=8", "tensor.data_parallel=3", "pipeline.microbatches=3", "run.collectives=rounds",
       "tensor.fuse_layers=on", "tensor.async_grad_allreduce=off", NULL},
      {"tensor.ranks=8", "tensor.data_parallel=3", "pipeline.microbatches=3", "pipeline.zero=1", NULL}};
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
    const char *sets[20] = {"tensor.hidden=1024", "tensor.heads=8", "tensor.layers=4", "tensor.seq=128",
                            "tensor.microbatch=2", "tensor.vocab=51200", "pipeline.stages=2", "tensor.recompute=on"};
    size_t n = 8;
    for (size_t k = 0; variants[v][k]; k++)
      sets[n++] = variants[v][k];
    sets[n++] = "pipeline.mirror_replicas=off";
    sets[n] = NULL;
    json_t *full = run3d(dir, "full", "selene", sets);
    sets[n - 1] = "pipeline.mirror_replicas=on";
    json_t *mir = run3d(dir, "mirror", "selene", sets);
    ck_assert(json_is_true(json_object_get(pp(mir), "mirror_replicas")));
    ck_assert(json_is_false(json_object_get(pp(full), "mirror_replicas")));
    static const char *const keys[] = {"makespan_s", "tflops_per_gpu", "bubble_fraction", "p2p_bytes"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      ck_assert_msg(rel(pnum(mir, keys[k]), pnum(full, keys[k])) <= TOL_MIRROR_REL, "variant %zu %s: mirrored %.17g, "
                    "simulated %.17g", v, keys[k], pnum(mir, keys[k]), pnum(full, keys[k]));
    static const char *const per[] = {"busy_s", "idle_s", "update_s"};
    for (size_t st = 0; st < 2; st++)
      for (size_t k = 0; k < sizeof per / sizeof per[0]; k++)
        ck_assert_msg(rel(stage_num(mir, st, per[k]), stage_num(full, st, per[k])) <= TOL_MIRROR_REL,
                      "variant %zu stage %zu %s: mirrored %.17g, simulated %.17g", v, st, per[k],
                      stage_num(mir, st, per[k]), stage_num(full, st, per[k]));
    ck_assert(bytes_total(mir) < bytes_total(full)); /* the mirrors' pipeline traffic is not simulated */
    json_decref(full);
    json_decref(mir);
  }
  free(dir);
}
END_TEST

/* Mirroring is refused (exit 2, one line, before the run) where it would not be exact or has
 * nothing to mirror: two replicas' stages in one dgx2h node share its InfiniBand link for their
 * boundary messages, and so do t = 2 and d = 4 on selene; with t = 2 and d = 3 replica 0's
 * boundary stays in a node where replica 1's crosses two (a route of another latency); a
 * straggler computes slower than its twin; numerics train each replica on its own data; dense
 * stages have no replicas. */
START_TEST(test_pipeline3d_mirror_refused)
{
  char *dir = cli_tmpdir();
  struct {
    const char *set[4];
    const char *needle;
  } cases[] = {
      {{"platform.preset=dgx2h", NULL}, "both use link gpu-ib-"},
      {{"tensor.ranks=2", "tensor.data_parallel=3", NULL}, "differs from its twin gpu-0 -> gpu-6 (replica 0)"},
      {{"tensor.ranks=2", "tensor.data_parallel=4", NULL}, "both use link gpu-ib-0_UP"},
      {{"faults.stragglers=0.1:2", NULL}, "stragglers"},
      {{"model.numerics=on", NULL}, "pipeline.mirror_replicas: mirrors the data-parallel replicas of transformer"},
      {{"pipeline.model=dense", "tensor.ranks=1", "tensor.data_parallel=1", NULL}, "pipeline.mirror_replicas"},
  };
  static const char *const base[] = {
      "run", "--out", "out", "--set", "run.algorithm=pipeline", "--set", "pipeline.model=transformer", "--set",
      "model.numerics=off", "--set", "platform.preset=selene", "--set", "tensor.ranks=8", "--set",
      "tensor.data_parallel=2", "--set", "pipeline.stages=2", "--set", "tensor.hidden=256", "--set", "tensor.heads=8",
      "--set", "tensor.layers=2", "--set", "tensor.vocab=256", "--set", "pipeline.mirror_replicas=on", NULL};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    refused3d(dir, base, cases[i].set, cases[i].needle);
  free(dir);
}
END_TEST

static Suite *pipeline3d_suite(void)
{
  Suite *s = suite_create("pipeline3d");
  TCase *tc = tcase_create("timing");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_pipeline3d_one_stage_equals_tensor);
  tcase_add_test(tc, test_pipeline3d_bubble);
  suite_add_tcase(s, tc);
  tc = tcase_create("bytes");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_pipeline3d_p2p_bytes);
  tcase_add_test(tc, test_pipeline3d_dp_bytes);
  tcase_add_test(tc, test_pipeline3d_zero3_bytes);
  tcase_add_test(tc, test_pipeline3d_zero3_tensors);
  tcase_add_test(tc, test_pipeline3d_zero3_deepspeed);
  tcase_add_test(tc, test_pipeline3d_zero1_bytes);
  suite_add_tcase(s, tc);
  tc = tcase_create("mapping");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_pipeline3d_host_mapping);
  suite_add_tcase(s, tc);
  tc = tcase_create("mirror");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_pipeline3d_mirror);
  tcase_add_test(tc, test_pipeline3d_mirror_refused);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_pipeline3d_determinism);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_pipeline3d_bad_input);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(pipeline3d_suite)
