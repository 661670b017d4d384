# numref CUDA tests — `numref conform --backend cuda --level 0` on a GPU must report 0 failures.
#                                                                         spec §A.4 (label cuda-device)
# -DCLI=<numref> -DPROBE=<check_backend_open> -DPLUGIN=<libnumref_backend_cuda.so>
# Without a device the probe answers 0 ("unavailable"): this script then exits with the skip code
# (CTest SKIP_REGULAR_EXPRESSION "SKIPPED"), never a pass.
execute_process(COMMAND ${PROBE} ${PLUGIN} RESULT_VARIABLE probe OUTPUT_VARIABLE probe_out ERROR_VARIABLE probe_err)
if(probe EQUAL 0)
  message("SKIPPED: no CUDA device; numref conform --backend cuda was not run (${probe_out})")
  return()
elseif(NOT probe EQUAL 77)
  message(FATAL_ERROR "the cuda plugin probe failed: ${probe_out}${probe_err}")
endif()
execute_process(COMMAND ${CLI} conform --backend cuda --level 0 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "numref conform --backend cuda --level 0 exited with ${rc}")
endif()
if(out MATCHES "[1-9][0-9]* failed")
  message(FATAL_ERROR "numref conform --backend cuda reported failures")
endif()
if(out MATCHES "SKIPPED cuda" OR NOT out MATCHES "[1-9][0-9]* passed")
  message(FATAL_ERROR "numref conform --backend cuda passed nothing on a machine with a device")
endif()
