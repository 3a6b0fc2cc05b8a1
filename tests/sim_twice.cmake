# Runs the CLI twice on the same small scenario (once with two SimGrid threads) and
# compares every result file byte for byte (STYLE 26, label sim).
# -DDTSIM=path/to/dtsim -DWORK=scratch folder
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(args run --quiet --set run.max_steps=20 --set run.eval_every=0.002 --set model.layers=16,32,4
    --set data.train=2000 --set data.test=500 --set downpour.replicas=6 --set downpour.ps_shards=3)
execute_process(COMMAND ${DTSIM} ${args} --out ${WORK}/a RESULT_VARIABLE rc1)
execute_process(COMMAND ${DTSIM} ${args} --out ${WORK}/b --cfg=contexts/nthreads:2 RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "dtsim failed: exit ${rc1} and ${rc2}")
endif()
foreach(f summary.json progress.csv staleness.csv links.csv breakdown.csv)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/a/${f} ${WORK}/b/${f} RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${f} differs between two runs of the same scenario")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
