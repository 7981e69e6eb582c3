# The CLI projects a vector case and refuses unreadable input with a clear message and exit 1.
execute_process(COMMAND ${KOPT} project ${FIX}/vectors/b01-contract-basic.events.json
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kopt project failed: ${rc}")
endif()
string(FIND "${out}" "\"command\":\"python bench.py\"" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "unexpected output: ${out}")
endif()
execute_process(COMMAND ${KOPT} project ${FIX}/does-not-exist.jsonl ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "cannot open")
  message(FATAL_ERROR "missing file: rc=${rc} err=${err}")
endif()
