# How much of the machine a suite takes while it runs: ctest resource groups over the "cpus" of
# tests/ctest-resources.json (8 slots: shares, not cores; the build's CTEST_RESOURCE_SPEC_FILE, so
# plain `ctest -j` honours them too). light: no share (waits on servers, hosts, a debootstrap, or
# runs for a moment: unit suites); heavy: 2 (trains with mpirun ranks: four such at once); busy: 4
# (keeps both cores busy on purpose besides its own job: the busy-machine case); alone: RUN_SERIAL —
# the cases that judge timing, with nothing beside them. docs/benchmarks.md, "The suite's own time".
#
# Priority instead of exclusion: every entry but the timing ones runs at background CPU priority
# (TRELLIS_TEST_BACKGROUND: tests/support/background.sh — a cgroup of the lowest CPU weight where
# one can be made, root; `nice -n 19` in any case), the timing entries at the normal one. The
# scheduler then gives a timing case's ranks a core the moment they want one and the other suites
# what is left, so the timing entries (one at a time: RESOURCE_LOCK) run from the start beside
# everything else instead of one after another at the end with the CPU idle. With
# -DTRELLIS_TIMING_SERIAL=ON they run RUN_SERIAL as before (a machine where neither works).
option(TRELLIS_TIMING_SERIAL "Run the timing entries of the suite alone (RUN_SERIAL) rather than beside suites at background priority" OFF)
if(NOT TRELLIS_TIMING_SERIAL)
  set(TRELLIS_TEST_BACKGROUND sh ${PROJECT_SOURCE_DIR}/tests/support/background.sh)
else()
  set(TRELLIS_TEST_BACKGROUND "")
endif()
set(TRELLIS_TEST_LOAD_light "")
set(TRELLIS_TEST_LOAD_heavy "cpus:2")
set(TRELLIS_TEST_LOAD_busy "cpus:4")
set(TRELLIS_TEST_LOAD_alone "cpus:8")
# The command prefix for an entry of LOAD load: TRELLIS_TEST_BACKGROUND, except for the timing entries.
function(trellis_test_priority out load)
  if(load STREQUAL "alone")
    set(${out} "" PARENT_SCOPE)
  else()
    set(${out} ${TRELLIS_TEST_BACKGROUND} PARENT_SCOPE)
  endif()
endfunction()

function(trellis_test_load test load)
  if(NOT DEFINED TRELLIS_TEST_LOAD_${load})
    message(FATAL_ERROR "test ${test}: LOAD ${load} is not light, heavy, busy or alone")
  endif()
  if(load STREQUAL "alone")
    # At equal priority with light suites beside (unit suites, deb, Slurm) the detectors named a
    # false straggler and a paused PyTorch rank was counted twice, once in five runs each.
    if(TRELLIS_TEST_BACKGROUND)
      set_tests_properties(${test} PROPERTIES RESOURCE_LOCK trellis_timing)
    else()
      set_tests_properties(${test} PROPERTIES RUN_SERIAL TRUE)
    endif()
  elseif(TRELLIS_TEST_LOAD_${load})
    set_tests_properties(${test} PROPERTIES RESOURCE_GROUPS "${TRELLIS_TEST_LOAD_${load}}")
  endif()
endfunction()

# trellis_add_qtest(NAME SOURCES ... LIBS ... LABELS ... [TIMEOUT s] [COST s] [ENV k=v ...] [CASES ...] [LOAD l])
# One Qt Test executable registered with CTest. Qt-free libraries stay Qt-free: only the test
# executable links Qt Test. COST: the suite's seconds as last measured (scripts/suite-times.py), so
# that `ctest -j` starts the long ones first in a fresh build folder too (docs/benchmarks.md, "The
# suite's own time"); ctest replaces it with its own measurements after a run. CASES: the test
# functions this entry runs (all when none; the others go to trellis_add_qtest_cases entries).
# LOAD: light, heavy, busy or alone (above); by default light for a unit suite, heavy for any other.
function(trellis_add_qtest name)
  cmake_parse_arguments(T "" "TIMEOUT;COST;LOAD" "SOURCES;LIBS;LABELS;ENV;CASES" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}) # the one include root
  target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS} trellis_warnings)
  target_compile_definitions(${name} PRIVATE
    TRELLIS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TRELLIS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  trellis_reuse_pch(${name} ${T_LIBS})
  if(NOT T_LOAD)
    set(T_LOAD heavy)
    if("unit" IN_LIST T_LABELS AND NOT "mpi" IN_LIST T_LABELS)
      set(T_LOAD light)
    endif()
  endif()
  trellis_test_priority(nice ${T_LOAD})
  # Each case's seconds (Qt Test's JUnit report beside its usual output): scripts/suite-times.py --cases.
  add_test(NAME ${name} COMMAND ${nice} $<TARGET_FILE:${name}> ${T_CASES} -o -,txt -o ${PROJECT_BINARY_DIR}/Testing/cases/${name}.xml,junitxml)
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/Testing/cases)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # TRELLIS_AUTO_CALIBRATE=0: an estimate of a local CPU plan does not calibrate this machine first
  # (launcher/document/calibration_file.h) — a suite that estimates would start mpirun ranks
  # otherwise; the suites that test it set it themselves.
  # Qt Test's own watchdog (QTEST_FUNCTION_TIMEOUT, 300 s by default) is set 5 s under ctest's
  # bound, so a hang still prints the stack trace before ctest kills the suite. It must not be left
  # at its default: Qt 6.4's watchdog can miss the end of one function and the start of the next
  # when they follow within one wake-up (under load they do), and then counts from the earlier one:
  # on CI it ended tst_run_ownership 42 s into a function, 355 s into the suite.
  math(EXPR watchdog_ms "${T_TIMEOUT} * 1000 - 5000")
  # A suite that skips in initTestCase ran nothing: ctest reports it Skipped, not Passed. (Rows
  # skipped inside a suite that ran leave it Passed; test.sh lists them after the run.)
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    SKIP_REGULAR_EXPRESSION "SKIP   : [A-Za-z0-9_]+::initTestCase\\(\\)"
    ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=${watchdog_ms};TRELLIS_AUTO_CALIBRATE=0;QT_QPA_PLATFORM=offscreen;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OPENBLAS_NUM_THREADS=1;${T_ENV}")
  if(T_COST)
    set_tests_properties(${name} PROPERTIES COST ${T_COST})
  endif()
  trellis_test_load(${name} ${T_LOAD})
  if(T_CASES)
    trellis_note_split_cases(${name} ${name} ${T_CASES})
  endif()
endfunction()

# A suite split into ctest entries by CASES: each entry's cases noted (a global property), so that
# tests/CMakeLists.txt's qtest_cases_covered checks every test function runs in exactly one entry
# — a case added to the file and named in no entry would otherwise never run.
function(trellis_note_split_cases test entry)
  set_property(GLOBAL APPEND PROPERTY TRELLIS_SPLIT_SUITES ${test})
  set_property(GLOBAL APPEND PROPERTY TRELLIS_SPLIT_CASES_${test} "${entry}:${ARGN}")
endfunction()

# The check above, once every suite is registered: one line per split suite, its program then each
# entry's name and cases; scripts/check-split-suites.py compares them with the program's -functions.
function(trellis_add_split_suites_check)
  get_property(suites GLOBAL PROPERTY TRELLIS_SPLIT_SUITES)
  if(NOT suites)
    return()
  endif()
  list(REMOVE_DUPLICATES suites)
  set(content "")
  foreach(test ${suites})
    get_property(entries GLOBAL PROPERTY TRELLIS_SPLIT_CASES_${test})
    string(REPLACE ";" " " entries "${entries}")
    string(APPEND content "$<TARGET_FILE:${test}> ${entries}\n")
  endforeach()
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/Testing/split_suites.txt CONTENT "${content}")
  add_test(NAME qtest_cases_covered COMMAND ${TRELLIS_TEST_BACKGROUND} ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check-split-suites.py
                                            ${PROJECT_BINARY_DIR}/Testing/split_suites.txt)
  set_tests_properties(qtest_cases_covered PROPERTIES LABELS unit TIMEOUT 60 ENVIRONMENT "QT_QPA_PLATFORM=offscreen")
endfunction()

# trellis_add_qtest_cases(TEST NEW_NAME CASES... [LOAD l] [PROPERTIES ...])
# Registers the cases CASES of the Qt Test executable TEST as a ctest entry of their own, with
# TEST's labels, timeout, environment and load (LOAD overrides it), plus PROPERTIES (RUN_SERIAL,
# COST): how a suite's cases that judge timing (LOAD alone) are kept apart from the rest, which
# runs beside other suites. TEST's own entry must then name the remaining cases
# (set_tests_properties cannot narrow it); qtest_cases_covered checks that every case runs once.
function(trellis_add_qtest_cases test name)
  cmake_parse_arguments(C "" "LOAD" "CASES;PROPERTIES" ${ARGN})
  trellis_test_priority(nice "${C_LOAD}")
  add_test(NAME ${name} COMMAND ${nice} $<TARGET_FILE:${test}> ${C_CASES} -o -,txt -o ${PROJECT_BINARY_DIR}/Testing/cases/${name}.xml,junitxml)
  if(C_LOAD)
    trellis_test_load(${name} ${C_LOAD})
  else()
    get_test_property(${test} RESOURCE_GROUPS value)
    if(value)
      set_tests_properties(${name} PROPERTIES RESOURCE_GROUPS "${value}")
    endif()
  endif()
  foreach(property LABELS TIMEOUT ENVIRONMENT SKIP_REGULAR_EXPRESSION)
    get_test_property(${test} ${property} value)
    if(value)
      set_tests_properties(${name} PROPERTIES ${property} "${value}")
    endif()
  endforeach()
  if(C_PROPERTIES)
    set_tests_properties(${name} PROPERTIES ${C_PROPERTIES})
  endif()
  trellis_note_split_cases(${test} ${name} ${C_CASES})
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
             COMMAND ${TRELLIS_TEST_BACKGROUND} ${MPIEXEC_EXECUTABLE} -np ${ranks} --oversubscribe --allow-run-as-root
                     --mca btl_vader_single_copy_mechanism none $<TARGET_FILE:${name}>)
    set_tests_properties(${name}_np${ranks} PROPERTIES LABELS mpi TIMEOUT ${M_TIMEOUT}
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1")
    trellis_test_load(${name}_np${ranks} heavy)
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
  add_test(NAME ${name}_postgresql COMMAND ${TRELLIS_TEST_BACKGROUND} $<TARGET_FILE:${name}> ${ARGN})
  get_test_property(${name} LABELS labels)
  get_test_property(${name} ENVIRONMENT env)
  set_tests_properties(${name}_postgresql PROPERTIES LABELS "${labels};postgresql" TIMEOUT 300
    SKIP_REGULAR_EXPRESSION "SKIP   : [A-Za-z0-9_]+::initTestCase\\(\\)"
    ENVIRONMENT "${env};TRELLIS_TEST_HISTORY=postgresql")
endfunction()
