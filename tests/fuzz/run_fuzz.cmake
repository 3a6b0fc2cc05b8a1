# Runs each libFuzzer harness for SECONDS and prints a summary (runs, coverage, crashes).
# Called by the `fuzz` target with RUNS = "name=binary=dictionary|...", SRC (tests/fuzz)
# and WORK (the build's scratch folder). libFuzzer adds the inputs it finds to
# WORK/corpus/<name> (the committed seeds in SRC/corpus/<name> and SRC/regressions/<name>
# are only read), and saves a failing input as WORK/artifacts/<name>/crash-* (also
# leak-*, timeout-*, oom-*). Fails if any harness failed.
string(REPLACE "|" ";" runs "${RUNS}")
set(summary "")
set(failed "")
foreach(run ${runs})
  string(REPLACE "=" ";" parts "${run}")
  list(GET parts 0 name)
  list(GET parts 1 exe)
  list(GET parts 2 dict)
  file(MAKE_DIRECTORY ${WORK}/corpus/${name} ${WORK}/artifacts/${name})
  set(log ${WORK}/${name}.log)
  file(GLOB before ${WORK}/artifacts/${name}/*)
  message(STATUS "fuzz_${name}: ${SECONDS} s (log: ${log})")
  # -rss_limit_mb: a loader that turns a few bytes into gigabytes is a finding, not noise.
  execute_process(
    COMMAND ${exe} -max_total_time=${SECONDS} -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
            -dict=${dict} -artifact_prefix=${WORK}/artifacts/${name}/
            ${WORK}/corpus/${name} ${SRC}/corpus/${name} ${SRC}/regressions/${name}
    RESULT_VARIABLE rc OUTPUT_FILE ${log} ERROR_FILE ${log})
  file(STRINGS ${log} stats REGEX "cov: [0-9]+ ft: [0-9]+")
  set(cov "?")
  set(ft "?")
  if(stats)
    list(GET stats -1 last)
    string(REGEX MATCH "cov: ([0-9]+) ft: ([0-9]+)" _ "${last}")
    set(cov ${CMAKE_MATCH_1})
    set(ft ${CMAKE_MATCH_2})
  endif()
  file(STRINGS ${log} units REGEX "stat::number_of_executed_units: [0-9]+")
  set(execs "?")
  if(units)
    string(REGEX MATCH "[0-9]+$" execs "${units}")
  endif()
  file(GLOB corpus ${WORK}/corpus/${name}/*)
  list(LENGTH corpus ncorpus)
  file(GLOB found ${WORK}/artifacts/${name}/*)
  if(before)
    list(REMOVE_ITEM found ${before}) # earlier runs' findings are not this run's
  endif()
  if(NOT rc EQUAL 0)
    set(status "FAILED (exit ${rc})")
    list(APPEND failed ${name})
  else()
    set(status "ok")
  endif()
  string(APPEND summary "  fuzz_${name}: ${execs} runs, cov ${cov}, ft ${ft}, ${ncorpus} new corpus inputs: ${status}\n")
  foreach(f ${found})
    string(APPEND summary "    artifact: ${f}\n")
  endforeach()
endforeach()
message("Fuzzing summary (${SECONDS} s each):\n${summary}")
if(failed)
  message(FATAL_ERROR "fuzzing found problems in: ${failed}. Reproduce one with the replay "
    "driver (build/tests/fuzz/fuzz_replay_<name> FILE), fix it, and commit the input as "
    "tests/fuzz/regressions/<name>/<what-it-triggers>.")
endif()
