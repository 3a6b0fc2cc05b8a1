# Runs a numeric interleaved pipeline twice (once with two SimGrid threads) and compares
# every result file, pipeline.csv included, byte for byte (STYLE 26, label sim).
# -DDTSIM=path/to/dtsim -DWORK=scratch folder
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(args run --quiet --set run.algorithm=pipeline --set run.max_steps=20 --set run.eval_every=0.002
    --set model.layers=16,32,32,32,32,4 --set data.train=2000 --set data.test=500 --set pipeline.stages=2
    --set pipeline.schedule=interleaved --set pipeline.chunks=2 --set pipeline.microbatches=4
    --set pipeline.recompute=on)
execute_process(COMMAND ${DTSIM} ${args} --out ${WORK}/a RESULT_VARIABLE rc1)
execute_process(COMMAND ${DTSIM} ${args} --out ${WORK}/b --cfg=contexts/nthreads:2 RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "dtsim failed: exit ${rc1} and ${rc2}")
endif()
foreach(f summary.json progress.csv staleness.csv links.csv pipeline.csv)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/a/${f} ${WORK}/b/${f} RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${f} differs between two runs of the same scenario")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
