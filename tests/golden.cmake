# Runs one golden scenario and compares every result file with the committed copy byte for
# byte; summary.json's dtsim_version line is left out of the comparison. The folder must
# hold the same files as the committed one: a file gained or lost is a difference too.
# Pictures (*.png, the run's progress.png) are neither committed nor compared: their bytes
# come from gnuplot, cairo and the fonts installed, not from dtsim, and what they draw is
# progress.csv, which is compared.
# -DDTSIM=path/to/dtsim -DINI=scenario -DEXPECTED=committed folder -DWORK=scratch folder
# -DARGS=more run options (separated by |) -DUPDATE=1 rewrites the committed folder instead.
string(REPLACE "|" ";" ARGS "${ARGS}")
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${DTSIM} run ${INI} --quiet ${ARGS} --out ${WORK}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dtsim run ${INI} failed (exit ${rc}): ${err}")
endif()
if(UPDATE)
  file(REMOVE_RECURSE ${EXPECTED})
  file(COPY ${WORK}/ DESTINATION ${EXPECTED} PATTERN "*.png" EXCLUDE)
  file(REMOVE_RECURSE ${WORK})
  return()
endif()
file(GLOB want RELATIVE ${EXPECTED} ${EXPECTED}/*)
file(GLOB got RELATIVE ${WORK} ${WORK}/*)
list(FILTER want EXCLUDE REGEX "\\.png$")
list(FILTER got EXCLUDE REGEX "\\.png$")
list(SORT want)
list(SORT got)
if(NOT want STREQUAL got)
  message(FATAL_ERROR "result files differ: committed [${want}], this build [${got}]")
endif()
foreach(f ${want})
  file(READ ${EXPECTED}/${f} a)
  file(READ ${WORK}/${f} b)
  if(f STREQUAL "summary.json")
    string(REGEX REPLACE "\"dtsim_version\": \"[^\"]*\"" "" a "${a}")
    string(REGEX REPLACE "\"dtsim_version\": \"[^\"]*\"" "" b "${b}")
  endif()
  if(NOT a STREQUAL b)
    execute_process(COMMAND diff ${EXPECTED}/${f} ${WORK}/${f} OUTPUT_VARIABLE d)
    string(SUBSTRING "${d}" 0 2000 d)
    message(FATAL_ERROR "${f} differs from the committed tests/golden copy:\n${d}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
