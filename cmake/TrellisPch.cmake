# Faster builds from nothing (CI builds from nothing; docs/benchmarks.md "The suite's own time").
# Precompiled headers: Qt's headers are most of a library file's compile time (an estimate panel
# file: 18.9 s without, 10.1 s with; a dashboard panel 13.9 s -> 5.6 s, this 2-core machine). One
# header per Qt flavour (cmake/pch/qt_core.h, qt_widgets.h) for the libraries, and a host target per
# flavour whose header the suites reuse (built once, not once a suite). TRELLIS_PCH=OFF builds
# without them. And the suites' own files of the Qt layers compile at -Og instead of -O3: their
# time is their own code's (QTest's macros, lambdas), which runs little (tst_team_history.cpp:
# 19.0 s at -O3, 9.5 s at -Og); what they test is the libraries', built -O3 as shipped.
option(TRELLIS_PCH "Precompile the Qt headers (faster builds from nothing)" ON)

# trellis_pch(TARGET core|widgets): TARGET compiles with that flavour's precompiled header.
function(trellis_pch target flavour)
  if(TRELLIS_PCH)
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch/qt_${flavour}.h)
    target_compile_options(${target} PRIVATE -Winvalid-pch) # a header GCC cannot use is said
  endif()
endfunction()

# trellis_pch_host(NAME core|widgets LIBS...): a host target (one empty file) with the suites'
# flags whose precompiled header suites reuse through trellis_reuse_pch.
function(trellis_pch_host name flavour)
  if(NOT TRELLIS_PCH)
    return()
  endif()
  # Not Qt6::Test: it defines QT_TESTCASE_BUILDDIR as each suite's own folder, and GCC refuses a
  # header precompiled with one value of a macro in a file compiled with another (-Winvalid-pch).
  # A macro only the suite defines is fine where the header does not use it, as here.
  add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch/empty.cpp)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARGN} trellis_warnings)
  target_compile_options(${name} PRIVATE -Og) # the suites' (trellis_reuse_pch)
  target_compile_definitions(${name} PRIVATE
    TRELLIS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TRELLIS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_precompile_headers(${name} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch/qt_${flavour}.h)
endfunction()

# trellis_reuse_pch(TARGET LIBS...): a suite of the Qt layers (it links trellis_ui or
# trellis_launcher) compiles at -Og and reuses the host's header of its flavour. The others —
# kernels, the trainer, the plan — keep -O3: their suites run the header templates they test.
function(trellis_reuse_pch target)
  if(NOT "trellis_ui" IN_LIST ARGN AND NOT "trellis_launcher" IN_LIST ARGN)
    return()
  endif()
  target_compile_options(${target} PRIVATE -Og)
  if(NOT TRELLIS_PCH)
    return()
  endif()
  if("trellis_ui" IN_LIST ARGN AND TARGET trellis_pch_tests_widgets)
    target_precompile_headers(${target} REUSE_FROM trellis_pch_tests_widgets)
  elseif("trellis_launcher" IN_LIST ARGN AND TARGET trellis_pch_tests_core)
    target_precompile_headers(${target} REUSE_FROM trellis_pch_tests_core)
  else()
    return()
  endif()
  target_compile_options(${target} PRIVATE -Winvalid-pch) # a header GCC cannot use is said
endfunction()
