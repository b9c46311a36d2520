# One warnings target linked by every Trellis target (CONVENTIONS.md: no global flags).
add_library(trellis_warnings INTERFACE)
target_compile_options(trellis_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>)
