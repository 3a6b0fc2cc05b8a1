# Fails if sim/, models/ or algorithms/ call anything that breaks determinism: wall
# clocks, libc random numbers, the environment, or %p output.
# Calls are looked for outside string literals (a message may say "the step time (...)"),
# %p everywhere (it is a format).
file(GLOB_RECURSE srcs ${SRC}/sim/*.c ${SRC}/sim/*.h ${SRC}/models/*.c ${SRC}/models/*.h
     ${SRC}/algorithms/*.c ${SRC}/algorithms/*.h)
# sim/wallclock.c reads the machine's clock for the progress line's estimate of the wall
# time left, which goes to stderr and never into a result file; it is the only exemption.
list(REMOVE_ITEM srcs ${SRC}/sim/wallclock.c)
set(bad "")
foreach(f ${srcs})
  file(STRINGS ${f} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n}+1")
    string(REGEX REPLACE "\"([^\"\\\\]|\\\\.)*\"" "\"\"" code "${line}")
    if(code MATCHES "(^|[^a-zA-Z0-9_])(time|clock|gettimeofday|clock_gettime|rand|srand|random|srandom|drand48|getenv|secure_getenv|gsl_rng_env_setup)[ \t]*\\(" OR line MATCHES "%p")
      if(NOT line MATCHES "^[ \t]*(/\\*|\\*|//)")
        string(APPEND bad "${f}:${n}: ${line}\n")
      endif()
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "determinism lint: banned calls found:\n${bad}")
endif()
list(LENGTH srcs n_files)
message(STATUS "determinism lint: clean (${n_files} files checked)")
