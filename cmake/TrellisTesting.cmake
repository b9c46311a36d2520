# trellis_add_qtest(NAME SOURCES ... LIBS ... LABELS ... [TIMEOUT s] [ENV k=v ...])
# One Qt Test executable registered with CTest. Qt-free libraries stay Qt-free: only the test
# executable links Qt Test.
function(trellis_add_qtest name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS} trellis_warnings)
  target_compile_definitions(${name} PRIVATE
    TRELLIS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TRELLIS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # A suite that skips in initTestCase ran nothing: ctest reports it Skipped, not Passed. (Rows
  # skipped inside a suite that ran leave it Passed; test.sh lists them after the run.)
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    SKIP_REGULAR_EXPRESSION "SKIP   : [A-Za-z0-9_]+::initTestCase\\(\\)"
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OPENBLAS_NUM_THREADS=1;${T_ENV}")
endfunction()
