# trellis_add_qtest(NAME SOURCES ... LIBS ... LABELS ... [TIMEOUT s] [ENV k=v ...])
# One Qt Test executable registered with CTest. Qt-free libraries stay Qt-free: only the test
# executable links Qt Test.
function(trellis_add_qtest name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}) # the one include root
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

# trellis_add_mpi_program(NAME SOURCES ... RANKS n... [TIMEOUT s])
# An MPI test program (no test framework) linked with the trainer's core: one ctest per rank count.
function(trellis_add_mpi_program name)
  cmake_parse_arguments(M "" "TIMEOUT" "SOURCES;RANKS" ${ARGN})
  if(NOT M_TIMEOUT)
    set(M_TIMEOUT 300)
  endif()
  add_executable(${name} ${M_SOURCES})
  target_link_libraries(${name} PRIVATE trellis_trainer_core trellis_warnings)
  foreach(ranks ${M_RANKS})
    add_test(NAME ${name}_np${ranks}
             COMMAND ${MPIEXEC_EXECUTABLE} -np ${ranks} --oversubscribe --allow-run-as-root
                     --mca btl_vader_single_copy_mechanism none $<TARGET_FILE:${name}>)
    set_tests_properties(${name}_np${ranks} PROPERTIES LABELS mpi TIMEOUT ${M_TIMEOUT}
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1")
  endforeach()
endfunction()

# trellis_add_gpu_test(NAME SOURCES ... LIBS ...)
# A GPU test: a plain executable (the lent GPU machine has no Qt), labelled gpu; it exits 77, which
# ctest reports as skipped, on a machine without a GPU.
function(trellis_add_gpu_test name)
  cmake_parse_arguments(G "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${G_SOURCES})
  target_link_libraries(${name} PRIVATE ${G_LIBS} trellis_warnings)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()

# trellis_add_postgres_run(TEST [CASES...])
# The history suite TEST run again against a private PostgreSQL server (ctest TEST_postgresql;
# tests/support/history_engines.h starts it): only the named test functions when given (those not
# about SQLite files), every one otherwise.
function(trellis_add_postgres_run name)
  add_test(NAME ${name}_postgresql COMMAND ${name} ${ARGN})
  get_test_property(${name} LABELS labels)
  get_test_property(${name} ENVIRONMENT env)
  set_tests_properties(${name}_postgresql PROPERTIES LABELS "${labels};postgresql" TIMEOUT 300
    SKIP_REGULAR_EXPRESSION "SKIP   : [A-Za-z0-9_]+::initTestCase\\(\\)"
    ENVIRONMENT "${env};TRELLIS_TEST_HISTORY=postgresql")
endfunction()
