/* check_scenario_validate.c - the scenario module's refusals: error messages (file, line,
 * key) and the validation of shapes, fields and combinations across keys. Defaults,
 * parsing, --set and the key reference are check_scenario.c's. */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/downpour.h"
#include "algorithms/sgd.h"
#include "sim/scenario.h"
#include "check_util.h"
#include "scenario_util.h"

/* ---------- errors ---------- */

/* Each bad file gives -1 and one line naming the file, the line and the key. */
START_TEST(test_scenario_errors_file)
{
  static const struct {
    const char *text, *expect; /* expect follows "PATH:" */
  } bad[] = {
      {"[run]\nseed = 1\nfoo = 2\n", ":3: unknown key 'foo' in section [run]"},
      {"[run]\nseed = 1\n\n[bar]\nx = 1\n", ":4: unknown section [bar]"},
      {"[bar]\n", ":1: unknown section [bar]"},
      {"[run]\nseed = abc\n", ":2: run.seed: 'abc' is not an integer"},
      {"[downpour]\nreplicas = 2\nlr = -1\n", ":3: downpour.lr: must be > 0, got -1"},
      {"[sgd]\n\nlr = 0\n", ":3: sgd.lr: must be > 0, got 0"},
      {"[downpour]\nbatch = 0\n", ":2: downpour.batch: must be > 0, got 0"},
      {"[data]\ntrain = 0\n", ":2: data.train: must be > 0, got 0"},
      {"[downpour]\nreplicas = 0\n", ":2: downpour.replicas: must be >= 1, got 0"},
      {"[model]\ntype = cnn\n", ":2: model.type: 'cnn' is not one of: linear, logistic, softmax, mlp"},
      {"[platform]\nplacement = random\n", ":2: platform.placement: 'random' is not one of"},
      {"[run]\ntarget_accuracy = 1.5\n", ":2: run.target_accuracy: must be in [0, 1], got 1.5"},
      {"[data]\ntest_fraction = 1\n", ":2: data.test_fraction: must be in (0, 1), got 1"},
      {"[model]\nefficiency = 0\n", ":2: model.efficiency: must be in (0, 1], got 0"},
      {"[run]\nmax_sim_time =\n", ":2: run.max_sim_time: a number is required"},
      {"[downpour]\nlr = 0.1 0.2\n", ":2: downpour.lr: '0.1 0.2' is not a number"},
      {"[run]\nseed = 1\nnot a pair\n", ":3: expected 'key = value' or '[section]', got 'not a pair'"},
      {"[run\nseed = 1\n", ":1: section header '[run' has no closing ']'"},
      {"[run] seed = 1\n", ":1: unexpected 'seed = 1' after [run]"},
      {"seed = 1\n", ":1: 'seed' comes before any [section]"},
      {"[run]\n= 1\n", ":2: a key name is missing"},
      {"[run]\nseed = 1\nseed = 2\n", ":3: run.seed is set twice (first on line 2)"},
      {"[run]\nseed = 1\n[run]\nseed = 2\n", ":4: run.seed is set twice"},
      {"[platform]\npreset = distbelief-2012\nfile = a.xml\n",
       ":3: platform.file: platform.preset is also set (line 2)"},
      {"[platform]\nfile = a.xml\npreset = distbelief-2012\n",
       ":3: platform.preset: platform.file is also set (line 2)"},
      {"[run]\nSeed = 3\n", ":2: unknown key 'Seed' in section [run]; did you mean 'seed'?"},
      /* the first error wins, whatever kind: a syntax error before a bad value... */
      {"[run]\njunk\nseed = x\n", ":2: expected 'key = value'"},
      /* ...and a bad value before a syntax error */
      {"[run]\nseed = x\njunk\n", ":2: run.seed: 'x' is not an integer"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    scenario s;
    char err[ERRLEN] = "", path[64], want[256];
    scenario_defaults(&s);
    ck_assert_msg(load_temp(&s, bad[i].text, path, sizeof path, err) == -1, "accepted: %s",
                  bad[i].text);
    snprintf(want, sizeof want, "%s%s", path, bad[i].expect);
    ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "got \"%s\", want \"%s...\"", err, want);
    ck_assert_msg(strchr(err, '\n') == NULL, "multi-line message: %s", err);
  }
}
END_TEST

START_TEST(test_scenario_errors_long_line)
{
  scenario s;
  char err[ERRLEN] = "", text[1200];
  scenario_defaults(&s);
  /* inih's line buffer is 200 bytes (INI_MAX_LINE in Debian's build): a longer line is
   * reported, not split into two lines as inih alone would. */
  snprintf(text, sizeof text, "[platform]\nfile = %0300d\n[run]\nseed = x\n", 0);
  ck_assert_int_eq(scenario_load_string(&s, text, "long.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "long.ini:2: line is longer than") != NULL, "%s", err);
  /* A long comment is fine, and line numbers after it stay right. */
  scenario_defaults(&s);
  snprintf(text, sizeof text, "; %0500d\n[run]\nseed = x\n", 0);
  ck_assert_int_eq(scenario_load_string(&s, text, "long.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "long.ini:3: run.seed") != NULL, "%s", err);
}
END_TEST

START_TEST(test_scenario_errors_open)
{
  scenario s;
  char err[ERRLEN] = "";
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_load_file(&s, "/nonexistent/dir/x.ini", err, sizeof err), -1);
  ck_assert_str_eq(err, "/nonexistent/dir/x.ini: cannot open: No such file or directory");
  ck_assert_int_eq(scenario_load_file(&s, "/tmp", err, sizeof err), -1);
  ck_assert_str_eq(err, "/tmp: cannot read: Is a directory");
}
END_TEST

/* ---------- validate ---------- */

START_TEST(test_scenario_validate_shapes)
{
  static const struct {
    const char *type, *layers, *expect; /* expect NULL: valid */
  } cases[] = {
      {"linear", "64,1", NULL},
      {"logistic", "123,1", NULL},
      {"softmax", "784,10", NULL},
      {"softmax", "784,2", NULL},
      {"mlp", "32,64,10", NULL},
      {"mlp", "440,2560,2560,2560,2560,8192", NULL},
      {"mlp", "4,3,2", NULL},
      {"linear", "64,2", "x.ini: model.layers: linear needs exactly 2 sizes"},
      {"linear", "64,8,1", "linear needs exactly 2 sizes"},
      {"logistic", "64,10", "logistic needs exactly 2 sizes"},
      {"softmax", "64,1", "softmax needs exactly 2 sizes, inputs and at least 2 classes"},
      {"softmax", "64,32,10", "softmax needs exactly 2 sizes"},
      {"mlp", "10,2", "x.ini: model.layers: mlp needs at least 3 sizes (inputs, hidden..., "
                      "outputs), got '10,2'"},
      {"mlp", "64,128,1", "mlp needs at least 2 outputs (classes), got '64,128,1'; for one "
                          "output use model.type = logistic"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    scenario s;
    char err[ERRLEN] = "", set[128];
    scenario_defaults(&s);
    snprintf(set, sizeof set, "model.type=%s", cases[i].type);
    ck_assert_int_eq(scenario_set(&s, set, err, sizeof err), 0);
    snprintf(set, sizeof set, "model.layers=%s", cases[i].layers);
    ck_assert_int_eq(scenario_set(&s, set, err, sizeof err), 0);
    int rc = scenario_validate(&s, "x.ini", err, sizeof err);
    if (!cases[i].expect)
      ck_assert_msg(rc == 0, "%s %s: %s", cases[i].type, cases[i].layers, err);
    else {
      ck_assert_msg(rc == -1, "accepted %s %s", cases[i].type, cases[i].layers);
      ck_assert_msg(strstr(err, cases[i].expect) != NULL, "got \"%s\", want \"%s\"", err,
                    cases[i].expect);
    }
  }
}
END_TEST

/* Values placed in the struct directly (not through the parser) are checked too. */
START_TEST(test_scenario_validate_fields)
{
  scenario s;
  char err[ERRLEN] = "";
  scenario_defaults(&s);
  DPW(s)->lr = -1;
  ck_assert_int_eq(scenario_validate(&s, NULL, err, sizeof err), -1);
  ck_assert_str_eq(err, "<default>: downpour.lr: must be > 0, got -1");
  scenario_defaults(&s);
  s.run.eval_every = NAN;
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: run.eval_every: must be a finite number") != NULL, "%s", err);
  scenario_defaults(&s);
  strcpy(s.run.algorithm, "hogwild");
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: run.algorithm: 'hogwild' is not one of") != NULL, "%s",
                err);
  scenario_defaults(&s);
  strcpy(s.data.source, "csv:");
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: data.source: 'csv:' needs a file name") != NULL, "%s", err);
  scenario_defaults(&s);
  strcpy(s.platform.file, "x.xml"); /* both preset and file */
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: platform.preset: must be empty when platform.file is set") !=
                    NULL, "%s", err);
  scenario_defaults(&s);
  s.platform.preset[0] = '\0'; /* neither */
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: platform.preset:") != NULL, "%s", err);
  scenario_defaults(&s);
  s.model.numerics = 0; /* timing only needs nothing else */
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), 0);
  /* rounds cannot lose a member midway: refused with host or link failures, not with
   * degraded links or stragglers */
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_set(&s, "run.collectives=rounds", err, sizeof err), 0);
  ck_assert_int_eq(s.run.collectives, 1);
  ck_assert_int_eq(scenario_set(&s, "faults.link_degrade=l@1:0.5", err, sizeof err), 0);
  ck_assert_msg(scenario_validate(&s, "a.ini", err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(scenario_set(&s, "faults.host_failures=replica-1@1", err, sizeof err), 0);
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: run.collectives: rounds cannot lose a member") != NULL, "%s", err);
  ck_assert_int_eq(scenario_set(&s, "run.collectives=messages", err, sizeof err), 0);
  ck_assert_msg(scenario_validate(&s, "a.ini", err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(scenario_set(&s, "run.collectives=bulk", err, sizeof err), -1);
  /* a linear teacher and a decayed input spectrum: the teacher's source only */
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_set(&s, "data.teacher_hidden=0", err, sizeof err), 0);
  ck_assert_int_eq(scenario_set(&s, "data.input_decay=2", err, sizeof err), 0);
  ck_assert_msg(scenario_validate(&s, "a.ini", err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(scenario_set(&s, "data.input_decay=-1", err, sizeof err), -1);
  ck_assert_int_eq(scenario_set(&s, "data.source=synthetic-gaussian", err, sizeof err), 0);
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: data.input_decay: only the synthetic-teacher source") != NULL, "%s", err);
}
END_TEST

/* Combinations a consensus run refuses (checked only when run.algorithm = consensus). */
START_TEST(test_scenario_validate_consensus)
{
  static const struct {
    const char *set1, *set2, *expect; /* expect NULL: valid */
  } cases[] = {
      {"run.max_steps=10", "consensus.topology=edgelist:g.txt", NULL},
      {"run.max_steps=10", "consensus.q=0.5", NULL},
      {"run.max_steps=10", "consensus.topology=grid", NULL}, /* grid_rows 0: the most square shape */
      {"run.max_steps=0", "consensus.mode=async", "x.ini: run.max_steps: consensus runs a fixed number"},
      {"run.max_steps=10", "model.numerics=off", "x.ini: model.numerics: consensus always computes"},
      {"run.max_steps=10", "run.target_accuracy=0.5", "x.ini: run.target_accuracy: consensus has no accuracy"},
      {"run.max_steps=10", "consensus.grid_rows=3", /* only grid and torus read it */
       "x.ini: consensus.grid_rows: has no effect with consensus.topology = ring"},
      {"consensus.topology=torus", "consensus.grid_rows=3", "x.ini: consensus.grid_rows: 3 rows do not divide 8 agents"},
      {"consensus.q=0.9", "consensus.weights=matrix:w.txt", "x.ini: consensus.weights: a fixed matrix cannot follow"},
      {"consensus.q=0.9", "consensus.weights=uniform", "x.ini: consensus.weights: uniform weights are doubly stochastic only"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    scenario s;
    char err[ERRLEN] = "";
    scenario_defaults(&s);
    ck_assert_int_eq(scenario_set(&s, "run.algorithm=consensus", err, sizeof err), 0);
    ck_assert_int_eq(scenario_set(&s, "run.max_steps=10", err, sizeof err), 0);
    ck_assert_msg(scenario_set(&s, cases[i].set1, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(scenario_set(&s, cases[i].set2, err, sizeof err) == 0, "%s", err);
    int rc = scenario_validate(&s, "x.ini", err, sizeof err);
    if (!cases[i].expect)
      ck_assert_msg(rc == 0, "%s %s: %s", cases[i].set1, cases[i].set2, err);
    else
      ck_assert_msg(rc == -1 && strstr(err, cases[i].expect) != NULL, "%s %s: got \"%s\", want \"%s\"",
                    cases[i].set1, cases[i].set2, err, cases[i].expect);
  }
  /* strings are checked as they are set */
  scenario s;
  char err[ERRLEN] = "";
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_set(&s, "consensus.topology=hypercube", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "'hypercube' is not a topology (ring, grid,") != NULL, "%s", err);
  ck_assert_int_eq(scenario_set(&s, "consensus.weights=matrix:", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "'matrix:' needs a file name") != NULL, "%s", err);
  ck_assert_int_eq(scenario_set(&s, "consensus.step_rule=1/k", err, sizeof err), -1);
  ck_assert_int_eq(scenario_set(&s, "consensus.q=1.5", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "must be in [0, 1]") != NULL, "%s", err);
}
END_TEST

/* [faults] stragglers = FRACTION:SLOWDOWN, and what Sandblaster needs. */
START_TEST(test_scenario_faults)
{
  scenario s;
  char err[ERRLEN] = "";
  double f, x;
  ck_assert_int_eq(scenario_stragglers("0.25:8", &f, &x), 0);
  ck_assert(f == 0.25 && x == 8);
  ck_assert_int_eq(scenario_stragglers("", &f, &x), 0);
  ck_assert(f == 0 && x == 1);
  const char *bad[] = {"0.25", "0.25:", ":8", "1.5:2", "-0.1:2", "0.5:0.5", "0.5:inf", "0.5:2x", "a:b", NULL};
  for (int i = 0; bad[i]; i++) {
    ck_assert_msg(scenario_stragglers(bad[i], &f, &x) == -1, "accepted %s", bad[i]);
    scenario_defaults(&s);
    char set[64];
    snprintf(set, sizeof set, "faults.stragglers=%s", bad[i]);
    ck_assert_int_eq(scenario_set(&s, set, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "is not FRACTION:SLOWDOWN") != NULL, "%s", err);
  }
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_set(&s, "faults.stragglers=none", err, sizeof err), 0);
  ck_assert_str_eq(s.faults.stragglers, "");
  ck_assert_int_eq(scenario_set(&s, "faults.stragglers=0.1:4", err, sizeof err), 0);
  /* every algorithm's workers can straggle (faults.c, compute_execute) */
  ck_assert_msg(scenario_validate(&s, "a.ini", err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(scenario_set(&s, "run.algorithm=sandblaster", err, sizeof err), 0);
  ck_assert_msg(scenario_validate(&s, "a.ini", err, sizeof err) == 0, "%s", err);
  s.model.numerics = 0;
  ck_assert_int_eq(scenario_validate(&s, "a.ini", err, sizeof err), -1);
  ck_assert_msg(strstr(err, "a.ini: model.numerics: sandblaster needs numerics") != NULL, "%s", err);
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_set(&s, "sandblaster.backup_at=1.5", err, sizeof err), -1);
  ck_assert_str_eq(err, "--set sandblaster.backup_at=1.5: must be in [0, 1], got 1.5");
  ck_assert_int_eq(scenario_set(&s, "sandblaster.push_every=0", err, sizeof err), -1);
  ck_assert_int_eq(scenario_set(&s, "sandblaster.history=0", err, sizeof err), -1);
}
END_TEST

START_TEST(test_scenario_validate_layers_helper)
{
  size_t sizes[4];
  ck_assert_int_eq(scenario_layers("32,64,10", sizes, 4), 3);
  ck_assert_uint_eq(sizes[0], 32);
  ck_assert_uint_eq(sizes[1], 64);
  ck_assert_uint_eq(sizes[2], 10);
  ck_assert_int_eq(scenario_layers(" 5 ,\t6", sizes, 4), 2);
  ck_assert_int_eq(scenario_layers("1,2,3,4,5", sizes, 4), -1);
  ck_assert_int_eq(scenario_layers("1,2,3,4,5", NULL, 0), 5);
  ck_assert_int_eq(scenario_layers("", NULL, 0), -1);
  ck_assert_int_eq(scenario_layers("1,", NULL, 0), -1);
  ck_assert_int_eq(scenario_layers("-1,2", NULL, 0), -1);
  ck_assert_int_eq(scenario_layers("1000000001,2", NULL, 0), -1);
  ck_assert_int_eq(scenario_layers("3x,2", NULL, 0), -1);
}
END_TEST

static Suite *scenario_validate_suite(void)
{
  Suite *s = suite_create("scenario_validate");
  TCase *tc = tcase_create("errors");
  tcase_add_test(tc, test_scenario_errors_file);
  tcase_add_test(tc, test_scenario_errors_long_line);
  tcase_add_test(tc, test_scenario_errors_open);
  suite_add_tcase(s, tc);
  tc = tcase_create("validate");
  tcase_add_test(tc, test_scenario_validate_shapes);
  tcase_add_test(tc, test_scenario_validate_fields);
  tcase_add_test(tc, test_scenario_validate_consensus);
  tcase_add_test(tc, test_scenario_faults);
  tcase_add_test(tc, test_scenario_validate_layers_helper);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(scenario_validate_suite)
