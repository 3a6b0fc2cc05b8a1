# Writes OUT, a C header defining DTSIM_SOURCE_HASH: the SHA-256 of the sources a run's results
# depend on (every .c and .h of models/, algorithms/ and sim/ but sim/lab/, which only starts runs),
# each file named relative to ROOT and hashed by its bytes, with the BLAS GSL computes with (BLAS).
# A stored run (reproduce_store.h) is taken back only under the same hash: a rebuilt dtsim
# whose code did not change keeps its runs on any machine; a change to a source does not.
file(GLOB files RELATIVE ${ROOT} ${ROOT}/models/*.[ch] ${ROOT}/algorithms/*.[ch] ${ROOT}/sim/*.[ch])
list(SORT files)
set(manifest "blas ${BLAS}\n")
foreach(f IN LISTS files)
  file(SHA256 ${ROOT}/${f} h)
  string(APPEND manifest "${h} ${f}\n")
endforeach()
string(SHA256 hash "${manifest}")
set(text "/* made by sim/lab/source_hash.cmake: do not edit */\n#define DTSIM_SOURCE_HASH \"${hash}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}") # unchanged: the header keeps its time, nothing rebuilds
  file(WRITE ${OUT} "${text}")
endif()
