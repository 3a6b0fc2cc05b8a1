/* check_keys.c - the key tables' value helpers (algorithms/keys.h): size lists, choice
 * lists, names-or-files and quoting, which every algorithm's key checks use. */

#include <check.h>
#include <string.h>

#include "algorithms/keys.h"
#include "check_util.h"

START_TEST(test_keys_sizes_parse)
{
  size_t s[4];
  ck_assert_int_eq(key_sizes_parse("64,128,10", s, 4), 3);
  ck_assert_uint_eq(s[0], 64);
  ck_assert_uint_eq(s[1], 128);
  ck_assert_uint_eq(s[2], 10);
  ck_assert_int_eq(key_sizes_parse(" 7 ,\t8", s, 4), 2); /* blanks around commas */
  ck_assert_uint_eq(s[1], 8);
  ck_assert_int_eq(key_sizes_parse("1,2,3,4", NULL, 0), 4); /* counting only */
  ck_assert_int_eq(key_sizes_parse("1000000000", s, 4), 1); /* KEY_SIZE_MAX itself */
}
END_TEST

START_TEST(test_keys_sizes_refused)
{
  size_t s[2];
  const char *bad[] = {"", "0", "1,,2", "1,", ",1", "1;2", "-3", "x", "1000000001", "99999999999999999999", "1 2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(key_sizes_parse(bad[i], s, 2) == -1, "'%s' parsed", bad[i]);
  ck_assert_int_eq(key_sizes_parse("1,2,3", s, 2), -1); /* more sizes than room */
}
END_TEST

START_TEST(test_keys_choices)
{
  ck_assert(key_choice_ok("ring|halving-doubling|tree", "tree"));
  ck_assert(key_choice_ok("ring|halving-doubling|tree", "ring"));
  ck_assert(!key_choice_ok("ring|halving-doubling|tree", "rin"));  /* a prefix is not a choice */
  ck_assert(!key_choice_ok("ring|halving-doubling|tree", "trees"));
  ck_assert(!key_choice_ok("ring|tree", ""));
}
END_TEST

START_TEST(test_keys_name_or_file)
{
  char msg[256];
  ck_assert_int_eq(key_check_name_or_file("ring", "ring|star", "edgelist:", "a topology", "ring, star", msg, sizeof msg), 0);
  ck_assert_int_eq(key_check_name_or_file("edgelist:g.txt", "ring|star", "edgelist:", "a topology", "ring, star", msg,
                                          sizeof msg), 0);
  ck_assert_int_eq(key_check_name_or_file("edgelist:", "ring|star", "edgelist:", "a topology", "ring, star", msg,
                                          sizeof msg), -1);
  ck_assert_str_eq(msg, "'edgelist:' needs a file name, as in edgelist:file.txt");
  ck_assert_int_eq(key_check_name_or_file("mesh", "ring|star", "edgelist:", "a topology", "ring, star", msg,
                                          sizeof msg), -1);
  ck_assert_str_eq(msg, "'mesh' is not a topology (ring, star)");
}
END_TEST

START_TEST(test_keys_quote)
{
  char buf[KEY_QUOTE_MAX + 8], longer[KEY_QUOTE_MAX + 20];
  ck_assert_str_eq(key_quote("abc", buf, sizeof buf), "'abc'");
  memset(longer, 'x', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  key_quote(longer, buf, sizeof buf);
  ck_assert_uint_eq(strlen(buf), KEY_QUOTE_MAX + 5); /* the kept characters, two quotes, three dots */
  ck_assert_str_eq(buf + KEY_QUOTE_MAX + 1, "...'");
}
END_TEST

static Suite *keys_suite(void)
{
  Suite *s = suite_create("keys");
  ADD_TCASE(s, "sizes", test_keys_sizes_parse, test_keys_sizes_refused);
  ADD_TCASE(s, "choices", test_keys_choices, test_keys_name_or_file);
  ADD_TCASE(s, "quote", test_keys_quote);
  return s;
}

CHECK_MAIN(keys_suite)
